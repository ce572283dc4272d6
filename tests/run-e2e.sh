#!/bin/sh
# Runs end-to-end test scripts: exit 0 passes, 77 skips (the script says why
# on stdout/stderr), anything else fails and its output is shown.
# Ends with the line "e2e: N passed, N failed, N skipped".
passed=0 failed=0 skipped=0
log=$(mktemp)
for t in "$@"; do
	if bash "$t" >"$log" 2>&1; then rc=0; else rc=$?; fi
	case $rc in
	0) passed=$((passed + 1)); echo "PASS $t" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $t: $(tail -n 1 "$log")" ;;
	*) failed=$((failed + 1)); echo "FAIL $t (exit $rc)"; sed 's/^/    /' "$log" ;;
	esac
done
rm -f "$log"
echo "e2e: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
