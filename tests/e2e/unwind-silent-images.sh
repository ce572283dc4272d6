#!/bin/bash
# A process image that ran the sampler and never sent its process totals
# (killed by a signal; exec'ed, or forked without exec) is counted on
# mt-unwind's stderr and written as a `lost` line reason=no-totals for
# mt-fold, not silently left out; images that end normally, or in _exit()
# (the sampler reports there too), are not, nor is a vfork child (it shares
# its parent's sampler).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# no_totals FILE: the PIDs of FILE's `lost ... reason=no-totals` lines.
no_totals() {
	awk -F'\t' '$1 == "lost" && $5 ~ /reason=no-totals/ { split($2, p, "/"); print p[1] }' "$1" |
		sort -n | tr '\n' ' '
}

"$CAP" -o "$T/ok.data" -- "$MT_FIXTURES/capture_alloc" 2 100 >/dev/null 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
mt-unwind -o "$T/ok.txt" "$T/ok.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
if grep -q "process images" "$T/uw"; then fail "a normal exit counted: $(cat "$T/uw")"; fi
[ -z "$(no_totals "$T/ok.txt")" ] || fail "a normal exit has a no-totals line"

# capture_alloc runs until killed; perl (whose own exit is normal) kills it.
# Then a perl that ends in POSIX::_exit sends its totals all the same.
"$CAP" -o "$T/k.data" -- perl -e '
	open my $f, ">", shift or die;
	open my $g, ">", shift or die;
	my $pid = fork // die; if (!$pid) { exec @ARGV or die } sleep 1; kill 9, $pid; waitpid $pid, 0;
	print $f "$pid\n";
	$pid = fork // die; if (!$pid) { exec "perl", "-e", "use POSIX; POSIX::_exit(0)" } waitpid $pid, 0;
	print $g "$pid\n"' "$T/pids" "$T/exit_pid" \
	"$MT_FIXTURES/capture_alloc" 1 0 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
mt-unwind -o "$T/k.txt" "$T/k.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
grep -q "^mt-unwind: 1 process images ran libmt-sampler.so and sent no process totals" "$T/uw" ||
	fail "the killed image is not counted, or the _exit() one is: $(cat "$T/uw")"
awk -F'\t' -v p="$(cat "$T/exit_pid")/$(cat "$T/exit_pid")" '$1 == "totals" && $2 == p && /scope=process/ { ok = 1 }
	END { exit !ok }' "$T/k.txt" || fail "no process totals from the image that ended in _exit()"
want=$(tr ' ' '\n' <"$T/pids" | sort -n | tr '\n' ' ')
[ "$(no_totals "$T/k.txt")" = "$want" ] ||
	fail "no-totals lines for pids '$(no_totals "$T/k.txt")', want '$want'"

# Forked without exec (the child's sampler is its parent's copy, mapped
# before the fork): the one killed after allocating is counted, the one that
# exits normally is not, nor the vfork child of python's subprocess.
if [ -x /usr/bin/python3 ]; then
	"$CAP" --rate 1 -o "$T/f.data" -- perl -e '
		open my $f, ">", shift or die;
		my $pid = fork // die;
		if (!$pid) { my @a = map { "x" x 200 } 1 .. 100; sleep 30; exit 0 }
		sleep 1; kill 9, $pid; waitpid $pid, 0;
		print $f "$pid\n";
		my $ok = fork // die;
		if (!$ok) { my @a = map { "y" x 200 } 1 .. 100; exit 0 }
		waitpid $ok, 0;
		system("/usr/bin/python3", "-c", "import subprocess; subprocess.run([\"true\"], check=True)") == 0 or die' \
		"$T/pids" >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
	mt-unwind -o "$T/f.txt" "$T/f.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
	[ "$(no_totals "$T/f.txt")" = "$(cat "$T/pids") " ] ||
		fail "no-totals lines for pids '$(no_totals "$T/f.txt")', want the killed fork child $(cat "$T/pids")"
	grep -q "^mt-unwind: 1 process images ran" "$T/uw" || fail "summary: $(cat "$T/uw")"
	# mt-fold: a warning, not lost events, and the all row is not checked.
	mt-fold --report --wide "$T/f.txt" >"$T/report" 2>"$T/fold.err" || fail "mt-fold: $(cat "$T/fold.err")"
	grep -q "^warning: 1 process images sent no exact totals" "$T/report" ||
		fail "no warning in the report: $(head -5 "$T/report")"
	grep -q "^all .* part " "$T/report" || fail "the all row is checked: $(grep '^all' "$T/report")"
	if grep -q "the capture lost" "$T/report"; then fail "counted as lost events"; fi
fi
echo "ok: killed images counted and written as no-totals lines; normal exits, _exit() and a vfork child not"
