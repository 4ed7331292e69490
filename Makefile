# groupspec: two commands on a fresh machine.
#   make verify   set up .venv, install the project, run the main job `groupspec verify`
#   make test     set up .venv, install the project, run the tests (CI profile)
#   make test-deep  the deep profile (nightly): many more examples, longer runs
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup verify test test-deep bench clean realstack kafkajs

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

verify: setup
	$(BIN)/groupspec verify

test: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q -m "not deep" tests

test-deep: setup
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -n 2 -q -m "deep or not deep" tests

bench: setup
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

# The real-stack matrix: every scenario for every client x coordinator (about half an hour).
realstack: setup kafkajs
	$(BIN)/groupspec realstack matrix --out realstack-out

# kafkajs (npm) for the real-stack harness, inside the venv; skipped with a note when npm is absent.
kafkajs: setup
	@if command -v npm >/dev/null; then npm install --silent --no-audit --no-fund --prefix $(VENV)/node kafkajs@2.2.4; \
	else echo "npm not found: the realstack matrix runs without kafkajs"; fi

clean:
	rm -rf $(VENV) build *.egg-info
