#!/bin/bash
# The golden-output tests of every tool's command line: the exact stderr and
# exit code of each usage, environment and data error (tests/cli/README.md).
exec bash "${MT_SRC:?}/tests/cli/run.sh"
