#!/usr/bin/env python3
# Build step: SCRIPT with its line `TEMPLATE = None` replaced by the text of
# TEMPLATE_FILE, written to OUT (build/bin/mt-html: one file to install).
import sys

script, tmpl, out = sys.argv[1:4]
with open(script, encoding="utf-8") as f:
    src = f.read()
with open(tmpl, encoding="utf-8") as f:
    text = f.read()
marker = "\nTEMPLATE = None"
if src.count(marker) != 1:
    sys.exit("embed-template: '%s' has no single 'TEMPLATE = None' line" % script)
src = src.replace(marker, "\nTEMPLATE = %r  # embedded from %s" % (text, tmpl.split("/")[-1]), 1)
with open(out, "w", encoding="utf-8") as f:
    f.write(src)
