# groupspec: two commands on a fresh machine.
#   make verify   set up .venv, install the project, run the main job `groupspec verify`
#   make test     set up .venv, install the project, run the tests (CI profile, includes mkdocs build --strict)
#   make smoke    a representative slice of the tests, under 2 minutes once set up
#   make test-deep  the deep profile (nightly): many more examples, longer runs
#   make test-spark the Spark tests (local mode and a standalone cluster on loopback); make test runs them too
# The interpreter .venv is made from: the first of /usr/bin/python3 and python3 (the one on PATH) that is Python 3.11
# or newer and can make a venv. The distribution's comes first: Debian's and Ubuntu's are built with profile-guided and
# link-time optimisation and link libpython statically, and they run this project's Python-bound work about 1.2 times
# as fast as a default pyenv build (tests/test_conformance.py, test_simulator.py, test_model.py and
# test_trace_check.py, one process, the same Hypothesis seed: 613 s against 746 s, 2026-11-30). make PYTHON=... overrides.
PYTHON ?= $(or $(shell for p in /usr/bin/python3 python3; do $$p -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { echo $$p; break; }; done),python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# How long `make test` takes here (printed before the run starts): 3,023 tests in 1,915 s and the Spark ones in about
# 2.5 minutes on this project's 2-core machine (2026-12-01, Debian's python3, a fresh clone: make test 34 min in all);
# set-up on a fresh machine adds the
# downloads (PySpark alone is ~320 MB, Apache Kafka's jars ~45 MB).
TEST_MINUTES ?= 35
# The smoke slice: every room touched once (layout, docs, every command's bad input, model and explorer,
# coordinator, consumer, simulator, assignors), no compiled engine and no Z3, so no first-run compilation.
SMOKE := tests/test_layout.py tests/test_docs.py tests/test_cli_bad_input.py tests/test_explorer.py \
         tests/test_coordinator_unit.py tests/test_coordinator_replay.py tests/test_consumer.py \
         tests/test_simulator_cli.py tests/test_assignor_check_core.py tests/test_assignors_range_roundrobin.py

.PHONY: setup verify test smoke test-deep test-spark bench clean docs-figures browser realstack kafkajs spec-mutants spec-mutants-deep

setup: $(STAMP)

$(STAMP): pyproject.toml groupspec/kafka/pom.xml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,docs,spark]'
	$(BIN)/python -m groupspec.kafka fetch
	touch $(STAMP)

# The explorer's browser test drives Debian's Chromium, headless (Playwright uses it; it downloads no browser).
browser:
	@command -v chromium >/dev/null || ( echo "installing Debian's chromium for the browser test"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ) || echo "warning: could not install chromium: tests/test_explorer_browser.py will fail"

verify: setup
	$(BIN)/groupspec verify

# The mutation campaign over model/ (docs/specification.md, "The mutation campaign"): every one-rule change of
# the specification must be killed by a check against the reference or by one of the model's properties.
spec-mutants: setup
	$(BIN)/groupspec verify --spec-mutants

spec-mutants-deep: setup
	$(BIN)/groupspec verify --spec-mutants --recheck-equivalent

test: setup browser
	@echo "make test: the CI profile, about $(TEST_MINUTES) minutes on 2 quiet cores (measured; longer on a busy machine;"
	@echo "           the first run also compiles the checker's engine, ~40 s). For a quick answer: make smoke"
	@start=$$(date +%s); \
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q --durations=20 -m "not deep and not spark" tests; rc=$$?; \
	[ $$rc -eq 0 ] && { $(MAKE) --no-print-directory test-spark; rc=$$?; }; \
	echo "make test: $$(( ($$(date +%s) - start) / 60 )) min $$(( ($$(date +%s) - start) % 60 )) s"; exit $$rc

test-spark: setup
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 0 -q -m spark tests

smoke: setup
	@start=$$(date +%s); \
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q -m "not deep and not spark" $(SMOKE); rc=$$?; \
	echo "make smoke: $$(( $$(date +%s) - start )) s (the whole suite: make test)"; exit $$rc

test-deep: setup kafkajs
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

docs-figures: setup
	$(BIN)/python -m groupspec.figures --out docs
