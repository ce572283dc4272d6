#!/bin/sh
# Build the kernel's libperf (tools/lib/perf) from Debian's linux-source-6.1
# tarball into $1 (default build/libperf): include/ and lib/{libperf,libapi}.a.
# Only the directories libperf's build needs are extracted (about 76 MB).
set -eu

out=${1:-build/libperf}
tarball=${LINUX_SOURCE_TARBALL:-$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	echo "mt: linux-source-6.1 tarball not found in /usr/src; run 'make deps'" >&2
	exit 3
fi

src=$out/src
top=linux-source-6.1
rm -rf "$src"
mkdir -p "$src" "$out/lib"
tar -xf "$tarball" -C "$src" \
	"$top/Makefile" "$top/tools" "$top/include/uapi" \
	"$top/arch/x86/include/uapi" "$top/scripts"

# EXTRA_CFLAGS: position-independent so libmt objects may link it anywhere.
make -s -C "$src/$top/tools/lib/perf" EXTRA_CFLAGS="-fPIC -O2 -g" >/dev/null
cp "$src/$top/tools/lib/perf/libperf.a" "$src/$top/tools/lib/api/libapi.a" "$out/lib/"
rm -rf "$out/include"
mkdir -p "$out/include"
cp -r "$src/$top/tools/lib/perf/include/perf" "$out/include/"
# Its headers need only <linux/...> uapi headers, which linux-libc-dev provides.
rm -rf "$src"
echo "mt: built libperf into $out" >&2
