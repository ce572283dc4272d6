#!/bin/bash
# Exit codes, as env(1) and timeout(1): the command's status when it ran
# (128+N for a signal N), 125 when mt-capture itself failed (also after the
# command ran), 126 when the command cannot be run, 127 when it was not
# found; lost data changes the status only with --strict (then 125).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# status WANT WHAT MT-CAPTURE-ARGS...: run mt-capture, stderr in $T/err.
status() {
	local want=$1 what=$2 rc=0
	shift 2
	"$CAP" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || fail "$what: exit $rc, want $want: $(cat "$T/err")"
}

status 3 "sh -c 'exit 3'" -o "$T/x.data" -- sh -c 'exit 3'
grep -q '^mt-capture: [0-9]* samples, 0 lost' "$T/err" || fail "exit 3: no end line: $(cat "$T/err")"
status 143 "a command killed by SIGTERM" -o "$T/x.data" -- sh -c 'kill -TERM $$'

status 127 "/nonexistent" -o "$T/x.data" -- /nonexistent
grep -qx "mt-capture: cannot run '/nonexistent': No such file or directory" "$T/err" ||
	fail "/nonexistent: $(cat "$T/err")"
status 127 "a name not in PATH" -o "$T/x.data" -- mt-no-such-command-here
grep -qx "mt-capture: cannot run 'mt-no-such-command-here': command not found" "$T/err" ||
	fail "not in PATH: $(cat "$T/err")"

printf 'echo hello\n' >"$T/not-executable"
chmod 644 "$T/not-executable"
status 126 "a file without x bits" -o "$T/x.data" -- "$T/not-executable"
grep -qx "mt-capture: cannot run '$T/not-executable': Permission denied" "$T/err" ||
	fail "not executable: $(cat "$T/err")"
# A name found in PATH but not executable: EACCES, as execvp says.
PATH=$T:$PATH status 126 "a name in PATH without x bits" -o "$T/x.data" -- not-executable
status 126 "a directory" -o "$T/x.data" -- "$T"
grep -qx "mt-capture: cannot run '$T': Is a directory" "$T/err" || fail "directory: $(cat "$T/err")"

# Files that look runnable and that only exec(2) refuses: the child's errno
# reaches mt-capture (ENOENT: the interpreter is missing, 127; EACCES: it
# cannot be executed, 126), as env(1) says.
printf '#!/nonexistent/interpreter\n' >"$T/no-interpreter"
printf '#!/etc/passwd\n' >"$T/bad-interpreter"
chmod 755 "$T/no-interpreter" "$T/bad-interpreter"
status 127 "a missing interpreter" -o "$T/x.data" -- "$T/no-interpreter"
grep -qx "mt-capture: cannot run '$T/no-interpreter': No such file or directory" "$T/err" ||
	fail "missing interpreter: $(cat "$T/err")"
status 126 "an interpreter that cannot be executed" -o "$T/x.data" -- "$T/bad-interpreter"
grep -qx "mt-capture: cannot run '$T/bad-interpreter': Permission denied" "$T/err" ||
	fail "bad interpreter: $(cat "$T/err")"

status 125 "a bad option" --no-such-option -o "$T/x.data" -- true
status 125 "--rate 0" --rate 0 -o "$T/x.data" -- true
status 125 "no command" -o "$T/x.data"
status 125 "an output that cannot be opened" -o "$T/no/such/dir/x.data" -- true
grep -q "^mt-capture: cannot create '$T/no/such/dir/x.data': No such file or directory" "$T/err" ||
	fail "output: $(cat "$T/err")"

# The stream fails after the command ran: the command's reader goes away
# (the command itself ends it, once it runs), so the last writes fail;
# 125 wins over the command's 3, and the message says so.
rm -f "$T/reader.pid"
set +e
"$CAP" -- sh -c 'while [ ! -s "$0" ]; do sleep 0.05; done; kill -PIPE "$(cat "$0")"; sleep 0.2; exit 3' \
	"$T/reader.pid" 2>"$T/err" | sh -c 'echo $$ >"$0"; exec cat >/dev/null' "$T/reader.pid"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 125 ] || fail "stream write error after the command ran: exit $rc: $(cat "$T/err")"
grep -q "^mt-capture: cannot write 'stdout': .*Broken pipe" "$T/err" &&
	grep -qx "mt-capture: the capture failed after the command ran: exit status 125, not the command's 3" "$T/err" ||
	fail "stream write error: $(cat "$T/err")"

# Loss: --no-wait with the smallest sample ring loses samples of 60,000 in
# a few ms (tests/e2e/capture-ring-loss.sh).  Without --strict the status
# is the command's, with it 125 and what was lost.
lossy=(--no-wait --mmap-pages 1 --rate 1 -o "$T/l.data" -- sh -c '"$0" "$@"; exit 5'
	"$MT_FIXTURES/capture_alloc" 2 3000)
status 5 "samples lost, no --strict" "${lossy[@]}"
lost=$(capture_lost "$T/err")
[ "$lost" -gt 0 ] || fail "nothing lost: the ring held the burst? $(cat "$T/err")"
status 125 "samples lost, --strict" --strict "${lossy[@]}"
grep -Eq "^mt-capture: --strict: the capture lost data \([1-9][0-9]* samples lost.*\): exit status 125, not the command's 5$" "$T/err" ||
	fail "--strict message: $(cat "$T/err")"
status 4 "--strict, nothing lost" --strict -o "$T/x.data" -- sh -c 'exit 4'
echo "ok: command's status 3 and 143; 127, 126, 125 as env(1); --strict 125 on $lost samples lost"
