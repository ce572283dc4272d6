#!/bin/bash
# -p PID: attach to a running fixture (trace mode): the synthesized COMM and
# MMAP2 come first, the calls made after attaching are all seen, and threads
# created after attaching are reported as not followed.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

attach() {	# THREADS ITERATIONS
	rm -f "$T/go"
	"$MT_FIXTURES/capture_alloc" "$1" "$2" "$T/go" >"$T/out" &
	fix=$!
	# Attach to the fixture, not to the shell that is still exec'ing it.
	for _ in $(seq 100); do
		case $(readlink /proc/$fix/exe) in *capture_alloc) break ;; esac
		sleep 0.05
	done
	rm -f "$T/p.data"
	"$CAP" -p $fix --mmap-pages 2048 -o "$T/p.data" 2>"$T/err" &
	cap=$!
	# The stream's header is written once the events are open (uprobe
	# registration can take seconds while other uprobes are torn down).
	for _ in $(seq 300); do [ -s "$T/p.data" ] && break; sleep 0.1; done
	touch "$T/go"
	wait $fix || fail "fixture failed"
	wait $cap || fail "mt-capture -p exited $?: $(cat "$T/err")"
}

attach 0 200
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost"
perf script -i "$T/p.data" -D 2>/dev/null | grep -m1 -q "PERF_RECORD_COMM.*capture_alloc" ||
	fail "no synthesized COMM"
perf script -i "$T/p.data" -D 2>/dev/null | grep -q "PERF_RECORD_MMAP2.*r-xp.*capture_alloc" ||
	fail "no synthesized MMAP2 of the fixture"
got=$(capture_regs "$T/p.data" | awk -v p=$fix '$1 == p && $2 == "probe_libc:malloc" && $3 < 5000' | wc -l)
[ "$got" = 200 ] || fail "-p: $got malloc calls seen, the fixture made 200"
! grep -q "not followed" "$T/err" || fail "single-threaded fixture reported unfollowed threads"

attach 2 50
grep -q "^mt-capture: 2 threads or processes started after attaching were not followed" "$T/err" ||
	fail "threads created after attaching not reported: $(cat "$T/err")"
echo "ok: -p sees 200 of 200 calls; 2 later threads reported"
