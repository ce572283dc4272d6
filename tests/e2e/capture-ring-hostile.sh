#!/bin/bash
# A program that writes over its sample ring (capture_scribble fills the
# mapping with pseudo-random words, header included or not) cannot make
# mt-capture crash, hang or write garbage: it stops reading the ring and
# says so, and its stream stays readable.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

for run in "1 all" "2 all" "3 all" "4 all" "5 records" "6 records" "7 records" "8 records"; do
	set -- $run
	seed=$1
	# Odd seeds with --strict: what the program destroyed is data lost.
	strict=
	[ $((seed % 2)) = 1 ] && strict=--strict
	rc=0
	timeout 20 "$CAP" $strict --rate 1 -o "$T/h.data" -- "$MT_FIXTURES/capture_scribble" $run \
		>"$T/out" 2>"$T/err" || rc=$?
	grep -q "scribbled=1" "$T/out" || fail "seed $seed: the fixture found no ring: $(cat "$T/out")"
	# Damage that shows (a header, a record that cannot be): say so.
	# Random words where a record should start look like a record whose
	# writer has not finished, or died before writing: the reading waits
	# there, then reads on from the next record, and the end says how many
	# bytes were passed over or never completed.
	if grep -q "^mt-capture: the sample ring was written over" "$T/err"; then
		:
	elif [ "$2" = records ]; then
		grep -Eq "^mt-capture: sample ring: .* ([1-9][0-9]* bytes never completed|[1-9][0-9]* bytes read past)" "$T/err" ||
			fail "seed $seed: no word of what was not read: $(cat "$T/err")"
	else
		fail "seed $seed ($2): no word of the damage: exit $rc: $(cat "$T/err")"
	fi
	# The status: the fixture's (0), or with --strict 125, saying why.
	if [ -n "$strict" ]; then
		[ "$rc" = 125 ] && grep -q "^mt-capture: --strict: the capture lost data (.*): exit status 125, not the command's 0" "$T/err" ||
			fail "seed $seed --strict: exit $rc: $(cat "$T/err")"
	else
		[ "$rc" = 0 ] || fail "seed $seed: exit $rc, not the fixture's 0: $(cat "$T/err")"
	fi
	mt-unwind -o /dev/null "$T/h.data" 2>"$T/uw" || fail "seed $seed: mt-unwind: $(cat "$T/uw")"
	perf script -i "$T/h.data" >/dev/null 2>"$T/ps" || fail "seed $seed: perf script: $(cat "$T/ps")"
done
echo "ok: 8 scribbled rings, each stopped, reported, a readable stream, exit 0 (--strict: 125)"
