# Quick start: `make demo` (a guided tour) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test bench lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(PY) -m bourdon demo

test: $(VENV)/.dev-installed
	$(PY) -m pytest -p no:cacheprovider

bench: $(VENV)/.dev-installed
	$(PY) bench/run.py

lint: $(VENV)/.dev-installed
	$(PY) -m ruff check bourdon tests bench scripts
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) .venv-ci build dist *.egg-info .hypothesis
