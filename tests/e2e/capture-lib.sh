# Shared by tests/e2e/capture-*.sh (sourced, not a test itself).
set -eu
: "${MT_BUILD:?}" "${MT_FIXTURES:?}"
CAP=$MT_BUILD/bin/mt-capture
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# MT_CAPTURE_NO_RING=1 (tests/e2e/capture-no-ring.sh): sample mode through
# the markers' uprobes instead of the sample ring.
if [ "${MT_CAPTURE_NO_RING:-}" = 1 ]; then
	printf '#!/bin/sh
case " $* " in *" --mode "*|*" -e "*|*" -p "*) exec "%s" "$@";; esac
exec "%s" --no-ring "$@"
' \
		"$CAP" "$CAP" >"$T/mt-capture-no-ring"
	chmod +x "$T/mt-capture-no-ring"
	CAP=$T/mt-capture-no-ring
fi

# Skip (77) unless perf_event_open and uprobes work here.
capture_skip_unless_perf() {
	command -v perf >/dev/null || { echo "perf not installed"; exit 77; }
	if ! "$CAP" -e cpu-clock -o "$T/probe.data" -- true 2>"$T/probe.err"; then
		cat "$T/probe.err"
		echo "perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
		exit 77
	fi
	if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
		echo "kernel without the uprobe PMU"
		exit 77
	fi
}

# Samples of FILE as lines "TID EVENT DI SI DX CX R8 R9 AX R10 R11 R12" in
# decimal, from perf script's own decoding (the compatibility oracle).
capture_regs() {
	perf script -i "$1" -F tid,event,uregs 2>/dev/null | perl -ne '
		next unless /^\s*(\d+)\s+(\S+):\s+ABI/;
		my ($tid, $ev) = ($1, $2); my %r;
		while (/\b([A-Z0-9]+):0x([0-9a-f]+)/g) { $r{$1} = hex($2); }
		print join(" ", $tid, $ev, map { $r{$_} // 0 } qw(DI SI DX CX R8 R9 AX R10 R11 R12)), "\n";'
}

# The "N samples, N lost" end line of an mt-capture stderr file.
capture_lost() {
	sed -n 's/^mt-capture: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$1"
}
capture_samples() {
	sed -n 's/^mt-capture: \([0-9]*\) samples, .*/\1/p' "$1"
}
