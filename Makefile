# groupspec: two commands on a fresh machine.
#   make verify   set up .venv, install the project, run the main job `groupspec verify`
#   make test     set up .venv, install the project, run the tests (CI profile)
#   make test-deep  the deep profile (nightly): many more examples, longer runs
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup verify test test-deep bench clean docs-figures browser

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The explorer's browser test drives Debian's Chromium, headless (Playwright uses it; it downloads no browser).
browser:
	@command -v chromium >/dev/null || ( echo "installing Debian's chromium for the browser test"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ) || echo "warning: could not install chromium: tests/test_explorer_browser.py will fail"

verify: setup
	$(BIN)/groupspec verify

test: setup browser
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q -m "not deep" tests

test-deep: setup
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -n 2 -q -m "deep or not deep" tests

bench: setup
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info

docs-figures: setup
	$(BIN)/python -m groupspec.figures --out docs
