# mt record -o - with stdout a terminal: refused (binary data)
script -qfec "mt record -o - -- true" /dev/null | tr -d '\r' >&2
exit "${PIPESTATUS[0]}"
