#!/bin/bash
# Golden-output tests of the tools' command lines (tests/cli/README.md).
#
#   tests/cli/run.sh [--update] [TOOL/NAME...]
#
# Runs every case tests/cli/TOOL/NAME.sh (or the ones named) with bash, in a
# fresh temporary directory as its working directory, stdin /dev/null, the
# tools on PATH ($MT_BUILD/bin, then $MT_SRC/scripts), and compares:
#   NAME.exit          the exit code (one number)                 required
#   NAME.stderr.exact  stderr, byte for byte                      required
#   NAME.stdout.exact  stdout, byte for byte                      optional
#   NAME.stdout.glob   stdout, line by line: each line literally, optional
#                      except a line "...", which matches any
#                      number of lines (none included)
# Prints "PASS TOOL/NAME" or "FAIL TOOL/NAME" and what differs, then the line
# "cli: N passed, N failed"; exits 1 when a case failed.
#
# --update writes NAME.exit and NAME.stderr.exact (and NAME.stdout.exact
# where it exists) from what the cases do now, for review with git diff;
# a .stdout.glob is still checked, never written.
set -u
LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")" && pwd)
MT_SRC=${MT_SRC:-$(cd "$here/../.." && pwd)}
MT_BUILD=${MT_BUILD:-$MT_SRC/build}
PATH=$MT_BUILD/bin:$MT_SRC/scripts:$PATH
export MT_SRC MT_BUILD PATH
# Nothing from the caller's environment that changes what a tool says.
unset DEBUGINFOD_URLS MT_PROGRESS_DELAY_MS LANGUAGE PYTHONWARNINGS

update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
CASE_TIMEOUT=${CLI_CASE_TIMEOUT:-60}

cases=()
if [ $# -gt 0 ]; then
	for c in "$@"; do
		c=${c%.sh}
		[ -f "$here/$c.sh" ] || { echo "run.sh: no case '$c' (want TOOL/NAME)" >&2; exit 2; }
		cases+=("$c")
	done
else
	# every directory is a tool's: mt-capture/ joins when it is written
	for f in "$here"/*/*.sh; do
		[ -f "$f" ] || continue
		c=${f#"$here"/}
		cases+=("${c%.sh}")
	done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mt-cli.XXXXXX") || exit 3
trap 'rm -rf "$work"' EXIT

# glob_match WANT GOT: 0 when GOT's lines match WANT's (see above).
glob_match() {
	awk -v want="$1" '
	BEGIN { m = n = 0; while ((getline l < want) > 0) e[m++] = l }
	{ g[n++] = $0 }
	END {
		ok[m, n] = 1
		for (i = m - 1; i >= 0; i--)
			for (j = n; j >= 0; j--)
				ok[i, j] = e[i] == "..." ? ok[i + 1, j] || (j < n && ok[i, j + 1]) \
					 : j < n && e[i] == g[j] && ok[i + 1, j + 1]
		exit !ok[0, 0]
	}' "$2"
}

# show_diff WANT GOT: a unified diff, indented
show_diff() {
	diff -u --label "want" --label "got" "$1" "$2" | sed 's/^/    /'
}

passed=0 failed=0
for c in "${cases[@]}"; do
	exp=$here/$c
	run=$work/${c//\//+}
	mkdir -p "$run/cwd" "$run/home"
	(cd "$run/cwd" && HOME=$run/home XDG_CACHE_HOME=$run/home/.cache \
		exec timeout -k 10 "$CASE_TIMEOUT" bash "$exp.sh" < /dev/null > "$run/stdout" 2> "$run/stderr")
	rc=$?
	if [ "$update" = 1 ]; then
		changed=
		[ "$(cat "$exp.exit" 2>/dev/null)" = "$rc" ] || { echo "$rc" > "$exp.exit"; changed+=" exit"; }
		cmp -s "$run/stderr" "$exp.stderr.exact" ||
			{ cp "$run/stderr" "$exp.stderr.exact"; changed+=" stderr"; }
		if [ -f "$exp.stdout.exact" ] && ! cmp -s "$run/stdout" "$exp.stdout.exact"; then
			cp "$run/stdout" "$exp.stdout.exact"
			changed+=" stdout"
		fi
		[ -z "$changed" ] || echo "UPDATE $c:$changed"
	fi
	why=()
	if [ ! -f "$exp.exit" ]; then
		why+=("no $c.exit")
	elif [ "$(cat "$exp.exit")" != "$rc" ]; then
		why+=("exit $rc, want $(cat "$exp.exit")$([ "$rc" = 124 ] && echo " (timed out after ${CASE_TIMEOUT}s?)")")
	fi
	if [ ! -f "$exp.stderr.exact" ]; then
		why+=("no $c.stderr.exact")
	elif ! cmp -s "$exp.stderr.exact" "$run/stderr"; then
		why+=("stderr differs:"$'\n'"$(show_diff "$exp.stderr.exact" "$run/stderr")")
	fi
	if [ -f "$exp.stdout.exact" ] && ! cmp -s "$exp.stdout.exact" "$run/stdout"; then
		why+=("stdout differs:"$'\n'"$(show_diff "$exp.stdout.exact" "$run/stdout")")
	fi
	if [ -f "$exp.stdout.glob" ] && ! glob_match "$exp.stdout.glob" "$run/stdout"; then
		why+=("stdout does not match $c.stdout.glob (a line ... there matches any lines):"$'\n'"$(show_diff "$exp.stdout.glob" "$run/stdout")")
	fi
	if [ ${#why[@]} -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $c"
	else
		failed=$((failed + 1))
		echo "FAIL $c"
		printf '  %s\n' "${why[@]}"
	fi
	rm -rf "$run"
done
echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
