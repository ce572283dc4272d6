# Sourced by tests/e2e/unwind-*.sh: perf checks and a uprobe recorder.
# Needs MT_BUILD, MT_FIXTURES, MT_SRC; sets $tmp (removed on exit).

tmp=$(mktemp -d)
probe_group="mtu$$"
cleanup() {
	perf probe -q -d "$probe_group:*" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

skip() {
	echo "$1"
	exit 77
}

# perf must exist and be allowed to record user stacks of our children.
unwind_need_perf() {
	command -v perf >/dev/null 2>&1 || skip "perf is not installed"
	command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
	if ! perf record -q -e cpu-clock --call-graph dwarf -o "$tmp/trial.data" true \
		>"$tmp/trial.log" 2>&1; then
		skip "perf record cannot run here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): $(head -n 1 "$tmp/trial.log")"
	fi
}

# unwind_trace_capture OUT CMD...: a trace-mode capture of CMD into OUT
# (stdout in $tmp/out); fails on a capture error, skips when events were
# lost (a busy machine: the tests count every call).
unwind_trace_capture() {
	local out=$1
	shift
	[ -x "$MT_BUILD/bin/mt-capture" ] && [ -x "$MT_BUILD/bin/mt-fold" ] ||
		skip "mt-capture or mt-fold not built"
	mt-capture --mode trace --mmap-pages 4096 -o "$out" -- "$@" >"$tmp/out" 2>"$tmp/cap.err" ||
		{ echo "FAIL mt-capture"; cat "$tmp/cap.err" "$tmp/out"; exit 1; }
	grep -q ' 0 lost' "$tmp/cap.err" ||
		skip "the capture lost events (machine too busy): $(tail -n 1 "$tmp/cap.err")"
}

# unwind_probe BIN EVENT: a uprobe $probe_group:EVENT on BIN's unwind_mark.
# Skips when uprobes cannot be placed (no tracefs or not root).
unwind_probe() {
	# tracefs is shared: another test editing probes at the same moment
	# makes perf probe fail now and then, so try a few times.
	tries=0
	until perf probe -q -x "$1" -a "$probe_group:$2=unwind_mark" >"$tmp/probe.log" 2>&1; do
		tries=$((tries + 1))
		[ "$tries" -lt 4 ] ||
			skip "cannot place a uprobe (perf probe needs root and tracefs): $(head -n 1 "$tmp/probe.log")"
		sleep 1
	done
}

# unwind_record_mark BIN OUT [ARGS...]: perf record with DWARF call graphs of
# every call of BIN's unwind_mark (a uprobe).  Skips when uprobes cannot be
# placed (no tracefs or not root).
unwind_record_mark() {
	bin=$1 out=$2
	shift 2
	perf probe -q -d "$probe_group:*" >/dev/null 2>&1
	unwind_probe "$bin" mark
	perf record -q -e "$probe_group:mark" --call-graph dwarf -o "$out" -- "$bin" "$@" \
		>"$tmp/record.log" 2>&1 || { cat "$tmp/record.log"; return 1; }
	perf probe -q -d "$probe_group:*" >/dev/null 2>&1
	return 0
}

# unwind_agree DATA [MIN [PERF_DATA]]: mt-unwind --addrs against perf script
# on DATA (perf reads PERF_DATA instead when given: the same samples).
unwind_agree() {
	perf script -i "${3:-$1}" --ns -F pid,tid,time,ip,dso --no-inline >"$tmp/agree.perf" 2>/dev/null
	mt-unwind -q --addrs --no-inline "$1" >"$tmp/agree.mt" || return 1
	python3 "$MT_SRC/tests/symbolize/agree.py" "$tmp/agree.perf" "$tmp/agree.mt" "${2:-99}"
}

# unwind_agree_capture DATA [MIN]: unwind_agree on an mt-capture stream,
# perf reading a copy (DATA.sw) whose uprobe-PMU events are declared
# software ones: perf 6.1 prints their frames only then
# (tests/symbolize/pmu_as_software.py).
unwind_agree_capture() {
	python3 "$MT_SRC/tests/symbolize/pmu_as_software.py" "$1" "$1.sw" &&
		unwind_agree "$1" "${2:-99}" "$1.sw"
}
