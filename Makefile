# The two commands of the README's quick start: `make run` and `make test`.
# Both create .venv on first use. torch is installed first and pinned:
# 2.13.0 is a CPU wheel, while an unpinned torch pulls a multi-GB CUDA build.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench-perf clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/halls serve

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

bench-perf: $(STAMP)
	$(BIN)/halls bench perf

clean:
	rm -rf $(VENV) build src/*.egg-info
