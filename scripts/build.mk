# scripts: sources, binaries and tests of this stage (see GNUmakefile).

# mt-flamegraph: python3 standard library only, nothing to build.
SCRIPTS += scripts/mt-flamegraph

E2E_TESTS += tests/e2e/flamegraph-layout.sh
E2E_TESTS += tests/e2e/flamegraph-determinism.sh
E2E_TESTS += tests/e2e/flamegraph-bad-input.sh
E2E_TESTS += tests/e2e/flamegraph-options.sh
E2E_TESTS += tests/e2e/flamegraph-fold.sh

# Real-browser test: Debian's chromium driven by playwright-core from npm, both
# installed by `sh mk/deps.sh browser` (playwright-core into build/browser).
# Workaround: where npm comes inside the installed nodejs (NodeSource's package
# provides and conflicts with Debian's npm), mk/deps.sh asks apt for Debian's npm
# and apt refuses; then install the two pieces directly instead.
BROWSER_DIR := build/browser

check-browser:
	@if command -v npm >/dev/null 2>&1 && \
	    ! dpkg-query -W -f='$${Status}\n' npm 2>/dev/null | grep -q 'ok installed'; then \
		echo "mt: npm comes with this nodejs: installing chromium and playwright-core directly" >&2; \
		command -v chromium >/dev/null 2>&1 || { \
			[ "$$(id -u)" -eq 0 ] || { echo "mt: run as root: apt-get install -y chromium" >&2; exit 3; }; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends chromium >&2; }; \
		[ -d $(BROWSER_DIR)/node_modules/playwright-core ] || { mkdir -p $(BROWSER_DIR) && \
			(cd $(BROWSER_DIR) && npm install --silent --no-audit --no-fund playwright-core@1 >&2); }; \
	else \
		sh mk/deps.sh browser; \
	fi
	@$(TEST_ENV) MT_BROWSER_DIR=$(abspath $(BROWSER_DIR)) node tests/browser/flamegraph.test.mjs
