# scripts: sources, binaries and tests of this stage (see GNUmakefile).

# mt-flamegraph: python3 standard library only, nothing to build.
SCRIPTS += scripts/mt-flamegraph
MANPAGES += docs/man/mt-flamegraph.1

E2E_TESTS += tests/e2e/flamegraph-layout.sh
E2E_TESTS += tests/e2e/flamegraph-determinism.sh
E2E_TESTS += tests/e2e/flamegraph-bad-input.sh
E2E_TESTS += tests/e2e/flamegraph-options.sh
E2E_TESTS += tests/e2e/flamegraph-fold.sh
E2E_TESTS += tests/e2e/flamegraph-units.sh
E2E_TESTS += tests/e2e/flamegraph-diff.sh

# Real-browser test: Debian's chromium driven by playwright-core from npm, both
# installed by `sh mk/deps.sh browser` (playwright-core into build/browser).
BROWSER_DIR := build/browser

# report.test.mjs folds its input with the built mt-fold and writes the pages
# with the built mt-html, and records build/fixtures/fold_phases with the
# built mt (mt record, mt report --html: all the stages); screenshots of each
# view land in build/browser-report/.
check-browser: all build/fixtures/fold_phases
	@sh mk/deps.sh browser
	@$(TEST_ENV) MT_BROWSER_DIR=$(abspath $(BROWSER_DIR)) node tests/browser/flamegraph.test.mjs
	@$(TEST_ENV) MT_BROWSER_DIR=$(abspath $(BROWSER_DIR)) node tests/browser/report.test.mjs
