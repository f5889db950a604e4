# clawcell: two commands set everything up on a fresh machine.
#   make demo   create .venv, install clawcell, run the guided demo
#   make test   install the test extras, lint, type-check and run the whole suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
ACORN := src/clawcell/runtime/vendor/acorn.js

.PHONY: demo test lint typecheck bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY) $(ACORN)
	$(PY) -m pip install --quiet -e .
	$(PY) -m compileall -q src
	touch $@

$(TEST_STAMP): pyproject.toml | $(PY) $(ACORN)
	$(PY) -m pip install --quiet -e '.[test,pydantic,web,ui,postgres]'
	$(PY) -m compileall -q src
	touch $@ $(STAMP)

# acorn (npm, pinned and hash-checked) words syntax errors as the release does; not kept in git.
$(ACORN): scripts/fetch-acorn.py
	$(PYTHON) scripts/fetch-acorn.py

demo: $(STAMP) $(ACORN)
	$(VENV)/bin/clawcell demo

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

typecheck: $(TEST_STAMP)
	$(VENV)/bin/pyright

test: $(TEST_STAMP) $(ACORN)
	scripts/ensure-chromium.sh
	scripts/ensure-bubblewrap.sh
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/pyright
	scripts/pg-test-env $(PY) -m pytest -m 'not isolated'  # a throwaway PostgreSQL for the store tests
	$(PY) -m pytest -m isolated  # timing ratios, in a process of their own

bench: $(TEST_STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache build dist
