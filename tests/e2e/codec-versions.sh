#!/bin/bash
# .mtz files written by earlier versions of mt-encode still decode, byte for
# byte, to the stream they were made from; and today's encoder writes the
# current version.  tests/codec/data/NAME-vN.mtz: made by mt-encode at
# version N from a stream whose SHA-256 is NAME-vN.sha256:
#   malloc-trace-v2  mt-capture --mode trace --stack-size 512 of
#                    codec_malloc_loop 30 (121 coded samples), encoded by
#                    mt-encode as built at ddc7d3a (version 2).
#   malloc-trace-v3  the same stream, encoded by mt-encode as built at
#                    0c096fa (version 3).
. "$(dirname "$0")/codec_lib.sh"
DATA=${MT_SRC:?}/tests/codec/data
n=0
for z in "$DATA"/*-v[0-9].mtz; do
	v=${z##*-v}; v=${v%.mtz}
	[ "$(od -An -tu2 -j 8 -N2 "$z" | tr -d ' ')" = "$v" ] || fail "$z: not a version $v file"
	"$ENC" -d -q -o "$T/out" "$z" || fail "$z: decoding failed: status $?"
	[ "$(sha256sum < "$T/out" | cut -d' ' -f1)" = "$(cat "${z%.mtz}.sha256")" ] ||
		fail "$z: decodes to other bytes than it was made from"
	# encoded again: today's version, and the same bytes back
	"$ENC" -q -o "$T/again.mtz" "$T/out" || fail "$z: encoding its stream failed"
	[ "$(od -An -tu2 -j 8 -N2 "$T/again.mtz" | tr -d ' ')" = 4 ] ||
		fail "mt-encode does not write version 4"
	"$ENC" -d -q "$T/again.mtz" | cmp -s - "$T/out" || fail "$z: the stream does not round-trip"
	n=$((n + 1))
done
[ "$n" -ge 1 ] || fail "no files in $DATA"
echo ok
