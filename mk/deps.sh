#!/bin/sh
# Install what mt needs from Debian's packages, then build libperf.
#   mk/deps.sh          install what is missing (root), or print the apt command
#   mk/deps.sh --check  exit 0 when everything is present, 1 otherwise (prints nothing)
#   mk/deps.sh browser  also the browser-test packages (chromium, playwright-core)
#   mk/deps.sh bench    also the benchmarks' peers and data (jemalloc, heaptrack,
#                       debug info for libc and a python3 built with it)
#   mk/deps.sh fuzz     also clang and libFuzzer (make fuzz)
#   mk/deps.sh --check GROUP  the same check with a group's packages
# golang-go is for the tests: `go tool pprof` reads mt-fold --pprof's files
# (tests/e2e/fold-pprof.sh).  Package names are Debian's; libperf is built from linux-source-6.1 by mk/libperf.sh.
set -eu

PACKAGES="build-essential libdw-dev libelf-dev libiberty-dev libzstd-dev libcriterion-dev linux-perf
pkg-config xz-utils zstd python3 linux-source-6.1 lld protobuf-c-compiler libprotobuf-c-dev
zlib1g-dev golang-go"
BROWSER_PACKAGES="chromium"
BENCH_PACKAGES="libjemalloc2 heaptrack libc6-dbg python3.11-dbg sqlite3 git"
FUZZ_PACKAGES="clang libclang-rt-14-dev"

missing_packages() {
	for p in $1; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			printf '%s ' "$p"
	done
}

check=
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
want="$PACKAGES"
[ "${1:-}" = bench ] && want="$want $BENCH_PACKAGES"
[ "${1:-}" = fuzz ] && want="$want $FUZZ_PACKAGES"
if [ "${1:-}" = browser ]; then
	want="$want $BROWSER_PACKAGES"
	# Node.js from another source (NodeSource) carries npm and conflicts with
	# Debian's npm package: ask for the packages only when the commands are absent.
	command -v node >/dev/null 2>&1 || want="$want nodejs"
	command -v npm >/dev/null 2>&1 || want="$want npm"
fi
missing=$(missing_packages "$want")

if [ -n "$check" ]; then
	[ -z "$missing" ]
	exit
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "mt: missing Debian packages: $missing" >&2
		echo "mt: run as root:  apt-get update && apt-get install -y $missing" >&2
		exit 3
	fi
	echo "mt: installing $missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
fi

if [ "${1:-}" = browser ]; then
	# playwright-core drives the system chromium; it never downloads a browser.
	dir=build/browser
	mkdir -p "$dir"
	if [ ! -d "$dir/node_modules/playwright-core" ]; then
		echo "mt: installing playwright-core into $dir" >&2
		(cd "$dir" && npm install --silent --no-audit --no-fund playwright-core@1 >&2)
	fi
fi
