#!/bin/bash
# Command line: exit status passed on, clear errors, exit codes (125: mt-capture
# failed; 127: the command was not found; tests/e2e/capture-exit.sh has the rest).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

rc=0; "$CAP" -o "$T/x.data" -- sh -c 'exit 7' 2>"$T/err" || rc=$?
[ "$rc" = 7 ] || fail "command status 7 became $rc"
rc=0; "$CAP" -o "$T/x.data" -- sh -c 'kill -SEGV $$' 2>"$T/err" || rc=$?
[ "$rc" = 139 ] || fail "command killed by SIGSEGV: status $rc, want 139"
rc=0; "$CAP" -o "$T/x.data" -- mt-no-such-command-here 2>"$T/err" || rc=$?
[ "$rc" = 127 ] || fail "missing command: status $rc"
grep -qx "mt-capture: cannot run 'mt-no-such-command-here': command not found" "$T/err" ||
	fail "missing command message: $(cat "$T/err")"
# A regular output file gets its blocks allocated ahead of the writes (not
# on tmpfs), and what was not written is released at the end.
"$CAP" -o "$T/pre.data" -- sh -c "stat -c '%s %b*%B' '$T/pre.data' >'$T/pre.mid'" 2>"$T/err" ||
	fail "capture to a file: $(cat "$T/err")"
read -r size used <"$T/pre.mid"
[ "$(stat -f -c %T "$T")" = tmpfs ] || [ $((used)) -ge $((size + 4194304)) ] ||
	fail "during the capture: $((used)) bytes allocated for $size written: none ahead"
read -r size used < <(stat -c '%s %b*%B' "$T/pre.data")
[ $((used)) -le $((size + 65536)) ] || fail "after the capture: $((used)) bytes allocated for $size"
rc=0; "$CAP" --rate 0 -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] || fail "--rate 0: status $rc"
rc=0; "$CAP" --mmap-pages 3 -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] || fail "--mmap-pages 3: status $rc"
rc=0; "$CAP" -e no-such-event -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -q "unknown event 'no-such-event'" "$T/err" || fail "unknown event: $rc $(cat "$T/err")"
# A hardware event: recorded where the CPU counts it, else a message that
# says why (virtual machines often have no counters).
rc=0; "$CAP" -e cycles -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || grep -q "cannot open event 'cycles': .*(no hardware counter for it here" "$T/err" ||
	fail "-e cycles: $rc $(cat "$T/err")"
# One event per capture: a second -e is refused, not the first one dropped.
rc=0; "$CAP" -e cycles -e cpu-clock -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -q "\-e given twice ('cycles', 'cpu-clock'): one event per capture" "$T/err" ||
	fail "-e twice: $rc $(cat "$T/err")"
rc=0; "$CAP" --no-wait --no-ring -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -q "no-wait is for sample mode" "$T/err" || fail "--no-wait with uprobes: $rc $(cat "$T/err")"
rc=0; "$CAP" -o "$T/x.data" 2>"$T/err" || rc=$?
[ "$rc" = 125 ] || fail "no command: status $rc"
"$CAP" --help | grep -q -- '--stack-size' || fail "--help lacks options"
"$CAP" --help | grep -q 'perf_event_paranoid' || fail "--help lacks the exit codes"
"$CAP" --help | grep -q '^  127  *the command was not found' || fail "--help lacks 127"
rc=0; MT_SAMPLER=/nonexistent/libmt-sampler.so "$CAP" -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] || fail "missing sampler: status $rc"
# mt-unwind knows the sampler by its file name: another one is refused
# (a symbolic link is fine: the real file's name is what is mapped).
cp "$MT_BUILD/libmt-sampler.so" "$T/other.so"
ln -s "$T/other.so" "$T/libmt-sampler.so"
rc=0; MT_SAMPLER=$T/libmt-sampler.so "$CAP" -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -q "must begin with libmt-sampler.so" "$T/err" ||
	fail "sampler linked to another name: status $rc: $(cat "$T/err")"
rm "$T/libmt-sampler.so"
rc=0; MT_SAMPLER=$T/other.so "$CAP" -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -q "must begin with libmt-sampler.so" "$T/err" ||
	fail "sampler under another name: status $rc: $(cat "$T/err")"
# Without CAP_PERFMON: sample mode needs no uprobe (its events come through
# the sample ring), so it works for an ordinary user with the usual
# perf_event_paranoid 2; uprobes (--no-ring) are refused: one clear line, exit 125.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# Copies the unprivileged user can reach wherever the tree is (a clone
	# in a mode 0700 directory hides build/ from it).
	chmod 777 "$T"
	cp "$CAP" "$MT_BUILD/libmt-sampler.so" "$MT_FIXTURES/capture_alloc" "$T/"
	chmod 755 "$T/mt-capture" "$T/libmt-sampler.so" "$T/capture_alloc"
	unprivileged() {
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			env MT_SAMPLER="$T/libmt-sampler.so" "$T/mt-capture" "$@"
	}
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
		rc=0
		unprivileged --rate 1 -o "$T/np.data" -- "$T/capture_alloc" 1 10 >/dev/null 2>"$T/err" || rc=$?
		[ "$rc" = 0 ] || fail "unprivileged sample mode: status $rc: $(cat "$T/err")"
		grep -q "^mt-capture: [1-9][0-9]* samples, 0 lost" "$T/err" || fail "unprivileged: $(cat "$T/err")"
		mt-unwind -o /dev/null "$T/np.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
		grep -Eq "events \(alloc [1-9][0-9]*, free [1-9]" "$T/uw" || fail "unprivileged events: $(cat "$T/uw")"
	fi
	rc=0
	unprivileged --no-ring -o "$T/np.data" -- true 2>"$T/err" || rc=$?
	[ "$rc" = 125 ] || fail "unprivileged uprobes: status $rc: $(cat "$T/err")"
	grep -q "perf_event_paranoid.*CAP_PERFMON" "$T/err" || fail "denied message: $(cat "$T/err")"
fi
echo "ok"
