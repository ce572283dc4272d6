#!/bin/bash
# A process image that loaded the sampler and never sent its process totals
# (ended in _exit(), killed by a signal) is counted on mt-unwind's stderr,
# not silently left out; images that end normally are not.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" -o "$T/ok.data" -- "$MT_FIXTURES/capture_alloc" 2 100 >/dev/null 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
mt-unwind -o /dev/null "$T/ok.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
if grep -q "process images" "$T/uw"; then fail "a normal exit counted: $(cat "$T/uw")"; fi

# capture_alloc runs until killed; perl (whose own exit is normal) kills it.
"$CAP" -o "$T/k.data" -- perl -e '
	my $pid = fork // die; if (!$pid) { exec @ARGV or die } sleep 1; kill 9, $pid; waitpid $pid, 0;
	$pid = fork // die; if (!$pid) { exec "perl", "-e", "use POSIX; POSIX::_exit(0)" } waitpid $pid, 0' \
	"$MT_FIXTURES/capture_alloc" 1 0 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
mt-unwind -o /dev/null "$T/k.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
grep -q "^mt-unwind: 2 process images loaded libmt-sampler.so and sent no process totals" "$T/uw" ||
	fail "the killed image and the _exit() one are not counted: $(cat "$T/uw")"
echo "ok: a killed image and an _exit() one counted, a normal exit not"
