# groupspec: two commands on a fresh machine.
#   make verify   set up .venv, install the project, run the main job `groupspec verify`
#   make test     set up .venv, install the project, run the tests (CI profile, includes mkdocs build --strict)
#   make smoke    a representative slice of the tests, under 2 minutes once set up
#   make test-deep  the deep profile (nightly): many more examples, longer runs
#   make test-spark the Spark tests (local mode and a standalone cluster on loopback); make test runs them too
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# How long `make test` took here (printed before the run starts): 2,881 tests and the Spark ones in 25 min 40 s on
# a quiet 2-core machine (a fresh-clone CI run, 2026-11-29); set-up on a fresh machine adds the downloads (PySpark alone is ~320 MB,
# Apache Kafka's jars ~45 MB).
TEST_MINUTES ?= 26
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
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -n 2 -q -m "not deep and not spark" tests; rc=$$?; \
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
