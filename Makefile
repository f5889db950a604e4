# clawcell: two commands set everything up on a fresh machine.
#   make demo   create .venv, install clawcell, run the guided demo
#   make test   install the test extras, lint, type-check and run the whole suite
#   make dist   build the sdist and the wheel into dist/, both carrying acorn
#   make lock   resolve requirements/*.txt again from pyproject.toml (deliberately, not on install)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
ACORN := src/clawcell/runtime/vendor/acorn.js
AXE := build/vendor/axe.min.js
# The venv's own pip (Python 3.11+ bundles one with editable pyproject installs) is used as is:
# upgrading it first cost a download and an install on every fresh clone.
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
# Exact versions with hashes (`make lock` writes them from pyproject.toml): a fresh clone installs
# today what it installs next month. The test lock's wheels are kept in $(WHEELS), so the suite can
# build a second environment from the lock without the network (tests/packaging/test_fresh_venv.py).
CORE_LOCK := requirements/core.txt
TEST_LOCK := requirements/test.txt
WHEELS := $(VENV)/wheels
# clawcell itself, once its dependencies are in: the build backend comes from the lock too.
PIP_SELF := $(PIP) --no-deps --no-build-isolation -e .
UV_VERSION := 0.13.9
# Compiles the JavaScript engine once into ~/.cache/clawcell (a no-op when it is there).
WARM_ENGINE := $(PY) -c 'import clawcell.runtime as r; r.compiled_reactor()'

.PHONY: demo test coverage lint typecheck bench dist clean lock

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml $(CORE_LOCK) | $(PY) $(ACORN)
	$(PIP) --require-hashes -r $(CORE_LOCK)
	$(PIP_SELF)
	$(PY) -m compileall -q src
	touch $@

# The system packages (apt) install while pip does: the two do not wait for each other.
$(TEST_STAMP): pyproject.toml $(TEST_LOCK) | $(PY) $(ACORN)
	scripts/ensure-test-system.sh & system=$$!; \
	$(PY) -m pip download --quiet --disable-pip-version-check --require-hashes \
		--only-binary :all: -r $(TEST_LOCK) -d $(WHEELS) \
	&& $(PIP) --no-index --find-links $(WHEELS) --require-hashes -r $(TEST_LOCK) \
	&& $(PIP_SELF) && $(PY) -m compileall -q src \
	&& touch $@ $(STAMP); status=$$?; \
	wait $$system || status=1; exit $$status

# Resolve both locks again from pyproject.toml (the one step that asks the index for new versions).
lock: | $(PY)
	$(PIP) uv==$(UV_VERSION)
	$(PY) scripts/lock.py $(VENV)/bin/uv

# acorn (npm, pinned and hash-checked) words syntax errors as the release does; not kept in git.
# Optional: when it cannot be fetched, one line says so and the target goes on without it.
$(ACORN): scripts/fetch-acorn.py
	$(PYTHON) scripts/fetch-acorn.py --optional

# axe-core (npm, pinned and hash-checked) is the accessibility check of the Chromium tests.
$(AXE): scripts/fetch-axe.py
	$(PYTHON) scripts/fetch-axe.py

# The warm-up compiles the engine once (cached in ~/.cache/clawcell), so no cell waits for it.
demo: $(STAMP) $(ACORN)
	$(WARM_ENGINE)
	$(VENV)/bin/clawcell demo

# The JavaScript (the guest controller, the V8 worker, the Control UI's modules) is linted by
# `deno lint`: deno is already a pinned test dependency from PyPI (the V8 executor), so no npm
# tool joins the lock. scripts/deno-lint.json names the files and drops the two rules that
# forbid `window` (Deno-only advice: the UI's modules run in a browser page). The guest
# controller is linted on its own without no-unused-vars and no-empty: its bytes are part of
# every guest's heap, and any edit to it (removing four unused captures, or only comments in
# two empty catch blocks) moved warm exec by 4-4.5 % in instructions (docs/benchmarks.md,
# "Issue 40's moves in instructions"), so it stays byte for byte until that is understood.
DENO_LINT := $(VENV)/bin/deno lint --quiet --config scripts/deno-lint.json && \
	$(VENV)/bin/deno lint --quiet --no-config --rules-tags=recommended \
		--rules-exclude=no-unused-vars,no-empty src/clawcell/runtime/controller.js

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(DENO_LINT)

typecheck: $(TEST_STAMP)
	$(VENV)/bin/pyright

# The suite runs with pytest-xdist, two workers more than cores: over a third of its time is
# spent waiting (subprocesses, servers, sleeps; a fresh-clone run used 1.4 of 2 cores with one
# extra worker), which the extra workers fill
# (`make test TEST_WORKERS=0`: one process),
# beside a throwaway PostgreSQL for the store tests; the timing-ratio tests then run alone,
# collected from the files below only (tests/test_isolated_tests.py keeps the list complete).
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 2)')
ISOLATED_TESTS := tests/hostile/test_hostile_source.py tests/reply/test_linearity.py

# Which lines of the package the parallel run executes (SlipCover, the workers' data combined in
# $(COVERAGE_JSON)): scripts/coverage-report.py prints the files below 100 % and fails the run
# under the floor. `make test COVERAGE=0` runs the suite without it.
COVERAGE ?= 1
COVERAGE_FLOOR := 93
COVERAGE_JSON := $(VENV)/coverage.json
ifeq ($(COVERAGE),1)
PYTEST := $(PY) -m slipcover --json --out $(COVERAGE_JSON) -m pytest
COVERAGE_REPORT := $(PY) scripts/coverage-report.py $(COVERAGE_JSON) --floor $(COVERAGE_FLOOR)
else
PYTEST := $(PY) -m pytest
COVERAGE_REPORT := true
endif

# The suite keeps pytest's rewritten test modules even where the environment says not to write
# bytecode (PYTHONDONTWRITEBYTECODE=1 here): without the cache each xdist worker rewrote every
# test module's assertions again, 14.9 s of CPU a worker to collect the suite against 7.9 s
# (the package itself is compiled at install). __pycache__ is ignored by git and the sdist.
test: export PYTHONDONTWRITEBYTECODE =
# pyright runs beside the tests (its report follows theirs): alone it kept one core idle.
test: $(TEST_STAMP) $(ACORN) $(AXE)
	scripts/ensure-test-system.sh
	$(VENV)/bin/ruff check src tests bench
	$(DENO_LINT)
	$(WARM_ENGINE)  # before the workers start, so they do not both compile it
	rm -f $(COVERAGE_JSON)
	$(VENV)/bin/pyright > $(VENV)/.pyright.log 2>&1 & pyright=$$!; \
	scripts/pg-test-env $(PYTEST) -m 'not isolated' -n $(TEST_WORKERS) --dist loadgroup \
		--durations=30; status=$$?; \
	$(COVERAGE_REPORT) || status=1; \
	wait $$pyright || status=1; echo "pyright:"; cat $(VENV)/.pyright.log; exit $$status
	$(PY) -m pytest -m isolated $(ISOLATED_TESTS)  # timing ratios, in a process of their own

coverage:  # kept for habit: `make test` measures coverage
	$(MAKE) test COVERAGE=1

bench: $(TEST_STAMP)
	$(PY) bench/run.py

# A release carries acorn, so here it is required; the wheel is built from the sdist.
dist: $(TEST_STAMP)
	$(PYTHON) scripts/fetch-acorn.py
	rm -rf dist
	$(PY) -m build --outdir dist .

clean:
	rm -rf $(VENV) .pytest_cache build dist
