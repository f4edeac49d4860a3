# Reasonix developer commands. `make test` and `make run` do all set-up on a
# fresh machine (they create .venv and install the dev tools first).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYZ    := dist/reasonix.pyz

.PHONY: test build run bench lint fmt contract clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff format --check reasonix tests bench build_zipapp.py
	$(VENV)/bin/ruff check reasonix tests bench build_zipapp.py
	$(VENV)/bin/mypy
	$(PY) -m reasonix.cli.gen_contract --check
	$(PY) -m reasonix.cli.gen_catalog --check

fmt: $(STAMP)
	$(VENV)/bin/ruff format reasonix tests bench build_zipapp.py
	$(VENV)/bin/ruff check --fix reasonix tests bench build_zipapp.py

build: $(STAMP)
	$(PY) build_zipapp.py

test: lint
	$(PY) -m pytest --ignore=tests/e2e
	$(PY) build_zipapp.py
	$(PY) -m pytest tests/e2e

run: build
	$(PY) $(PYZ)

contract: $(STAMP)
	$(PY) -m reasonix.cli.gen_contract

bench: build
	$(PY) bench/startup.py
	-$(PY) bench/sse.py
	-$(PY) bench/grep.py
	-$(PY) bench/task.py
	-$(PY) bench/turnlog.py
	-$(PY) bench/bm25.py
	-$(PY) bench/tokens.py
	-$(PY) bench/tui.py
	-$(PY) bench/serve.py
	-$(PY) bench/longsession.py
	-$(PY) bench/bigtree.py
	-$(PY) bench/usage.py

clean:
	rm -rf dist build .mypy_cache .ruff_cache .pytest_cache
