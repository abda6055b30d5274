# function-platform developer entry points. Needs python3.11; `make render` and the end-to-end
# tests also need a Crossplane CLI: a supported `crossplane` on PATH, or go to build the pinned one.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
RENDER_OUT ?=
CASE ?=

.PHONY: setup crank render serve generate test test-e2e lint bench package lock clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

## setup: virtualenv with the package and dev tools (no Crossplane CLI needed)
setup: $(VENV)/.installed

## crank: .bin/crank -> a supported `crossplane` on PATH, else the pinned one built with go
crank:
	tools/install-crank.sh

## render: serve the function locally and render every case (CASE=<module>/<case> renders one,
## RENDER_OUT=dir writes files)
render: setup crank
	$(PY) tools/render_examples.py $(if $(RENDER_OUT),--out $(RENDER_OUT),) $(if $(CASE),--case $(CASE),)

## serve: run the function for `crossplane render` (Development runtime dials localhost:9443)
serve: setup
	$(PY) -m function --insecure --debug --address localhost:9443

## generate: regenerate XRDs and the Input CRD from the pydantic models
generate: setup
	$(PY) tools/generate_apis.py

## test: lint and type checks, then every test, the end-to-end crank renders included
test: lint
	$(PY) -m pytest -q

## test-e2e: only the crank render proof (UPDATE_GOLDEN=1 rewrites tests/golden)
test-e2e: setup
	$(PY) -m pytest -q -m e2e

## lint: ruff, mypy, and generated files up to date
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) tools/generate_apis.py --check

## package: build/function-platform.xpkg: with the runtime image (IMAGE=...) when docker works,
## the package metadata alone otherwise; it says which
package: crank
	tools/build-package.sh

## lock: rewrite requirements.lock (the image's runtime dependencies) from pyproject.toml
lock: setup
	$(PY) tools/lock_requirements.py

## bench: the benchmark (bench/run.py) when present
bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .bin build dist .pytest_cache .mypy_cache .ruff_cache
