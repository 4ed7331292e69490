# groupspec: two commands on a fresh machine.
#   make verify   set up .venv, install the project, run the main job `groupspec verify`
#   make test     set up .venv, install the project, run the tests (CI profile)
#   make test-deep  the deep profile (nightly): many more examples, longer runs
#   make test-spark the Spark tests (local mode and a standalone cluster on loopback); make test runs them too
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup verify test test-deep test-spark bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,spark]'
	touch $(STAMP)

verify: setup
	$(BIN)/groupspec verify

test: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q -m "not deep and not spark" tests
	$(MAKE) test-spark

test-spark: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 0 -q -m spark tests

test-deep: setup
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -n 2 -q -m "deep or not deep" tests

bench: setup
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
