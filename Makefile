# function-platform developer entry points. Needs python3.11; `make render` and the end-to-end
# tests also need the Crossplane CLI v2.5 (a supported `crossplane` on PATH, or go to build the
# pinned one) and go to build the render engine (Crossplane core v2.4.0), both into .bin/.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
RENDER_OUT ?=
CASE ?=
# make render XR=<claim or composite> [CONVERGE=1] [OBSERVED=<file>] [REQUIRED=<file>]
XR ?=
CONVERGE ?=
OBSERVED ?=
REQUIRED ?=

.DEFAULT_GOAL := help

.PHONY: help activation-policy configurations uv setup cli helm render serve generate upgrade-preview test test-e2e test-live playground playground-down live-binaries live-crds lint format bench bench-live bench-scale package release test-release lock lock-check clean

## help: list the targets and what they do (the default goal)
help:
	@awk '/^## [a-z-]+: / { if (name) print_entry(); name = $$2; sub(/:$$/, "", name); text = substr($$0, length($$2) + 5); next } \
	  /^## / && name { text = text " " substr($$0, 4); next } \
	  name { print_entry(); name = "" } \
	  function print_entry() { printf "  make %-18s %s\n", name, text }' $(MAKEFILE_LIST)

# Dependencies come from the locks only: uv.lock (every closure: runtime + dev/test tools, with
# hashes) and requirements.lock (the image's runtime closure, exported from uv.lock). uv itself is
# bootstrapped from PyPI into .bin/uv-<version>, pinned with hashes in tools/uv-requirements.txt.
UV_VERSION := $(shell sed -n 's/^uv==\([^ ]*\).*/\1/p' tools/uv-requirements.txt)
UV_HOME := .bin/uv-$(UV_VERSION)
UV := $(UV_HOME)/bin/uv
# Never let uv download a Python: use the interpreter named above.
export UV_PYTHON_DOWNLOADS := never
# Trust the machine's certificate store (as pip does), not only uv's bundled roots: a proxy's CA works.
export UV_SYSTEM_CERTS := 1
# requirements.lock as `make lock` writes it: a header, then uv's export (runtime closure, hashes)
RUNTIME_LOCK := { echo "\# The image's runtime dependencies with hashes, exported from uv.lock by \`make lock\`; do not edit."; \
  $(UV) export --frozen --no-dev --no-emit-project --no-header --format requirements-txt --quiet; }

$(UV): tools/uv-requirements.txt
	$(PYTHON) -m venv $(UV_HOME)
	$(UV_HOME)/bin/python -m pip install --quiet --require-hashes -r tools/uv-requirements.txt
	touch $@

# --locked: install exactly uv.lock, and fail (instead of re-resolving) when pyproject.toml
# changed without `make lock`.
$(VENV)/.installed: pyproject.toml uv.lock $(UV)
	$(UV) sync --locked --extra dev --python $(PYTHON)
	touch $@

## setup: .venv with exactly the locked package and dev tools (no Crossplane CLI needed)
setup: $(VENV)/.installed

## cli: .bin/crossplane -> a supported `crossplane` CLI on PATH, else the pinned one built with
## go; .bin/crossplane-core -> the render engine (Crossplane core, pinned, built with go)
cli:
	@tools/install-cli.sh >&2

## render: serve the function locally and `crossplane composition render` every case
## (CASE=<module>/<case> renders one, RENDER_OUT=dir writes files); XR=<file> renders your own
## claim or composite with the module's shipped settings (tools/render_own.py, docs/rendering.md:
## CONVERGE=1 plays the providers until nothing new appears, OBSERVED=<file> renders against a
## live composite's exported resources, REQUIRED=<file> adds objects the cluster holds,
## GRAPH=<dir> draws what was composed: docs/graphs.md)
render: setup cli
ifneq ($(XR),)
	@$(PY) tools/render_own.py $(XR) $(if $(CONVERGE),--converge,) $(if $(OBSERVED),--observed $(OBSERVED),) $(foreach f,$(REQUIRED),--required $(f)) $(if $(GRAPH),--graph $(GRAPH),)
else
	@$(PY) tools/render_examples.py $(if $(RENDER_OUT),--out $(RENDER_OUT),) $(if $(CASE),--case $(CASE),)
endif

## upgrade-preview: what installing this checkout (or CANDIDATE=<rev|dir|host:port>) would do to
## every composite of the function on a cluster running RUNNING=<rev|dir|host:port> (a git
## revision of the release, v0.1.0 = de7f94b): KUBECONFIG=<file> [CONTEXT=] reads the cluster with
## kubectl (KUBECTL=<binary>), FROM=<export.yaml> an export instead, SAVE_EXPORT=<file> keeps what
## was read. Prints what is created, changed, deleted, replaced or refused; exit 0 safe, 1 a
## render failed, 2 bad input, 3 a composite refused, 4 stateful deleted or replaced (docs/upgrading.md)
RUNNING ?=
CANDIDATE ?=
FROM ?=
CONTEXT ?=
KUBECTL ?=
SAVE_EXPORT ?=
upgrade-preview: setup cli
	@$(PY) -m fnplatform.upgrade preview $(if $(RUNNING),--running $(RUNNING),) \
	  $(if $(CANDIDATE),--candidate $(CANDIDATE),) \
	  $(if $(FROM),--from $(FROM),$(if $(KUBECONFIG),--kubeconfig $(KUBECONFIG),)) \
	  $(if $(CONTEXT),--context $(CONTEXT),) $(if $(KUBECTL),--kubectl $(KUBECTL),) \
	  $(if $(SAVE_EXPORT),--save-export $(SAVE_EXPORT),)

## serve: run the function for `crossplane composition render` (Development runtime dials
## localhost:9443)
serve: setup
	$(PY) -m function --insecure --debug --address localhost:9443 --metrics-address=

## generate: regenerate XRDs and the Input CRD from the pydantic models, and the asya-crossplane
## chart's API templates from apis/async-actor/
generate: setup
	$(PY) tools/generate_apis.py
	$(PY) tools/generate_helm_chart.py

## activation-policy: regenerate examples/install/15-activation-policy.yaml, the
## ManagedResourceActivationPolicy naming every managed resource definition the modules compose
activation-policy: setup
	$(PY) tools/make_activation_policy.py

## configurations: regenerate configurations/<package>/ (each module's Configuration metadata,
## dependsOn derived from what it composes, and its ManagedResourceActivationPolicy)
configurations: setup
	$(PY) tools/make_configurations.py

## test: lint and type checks, then every test, the end-to-end renders included
test: lint
	$(PY) -m pytest -q

## test-e2e: only the render proof (UPDATE_GOLDEN=1 rewrites tests/golden)
test-e2e: setup
	$(PY) -m pytest -q -m e2e

## helm: build the pinned Helm CLI into .bin/helm-<version> (cached; the chart tests call it,
## test-live builds it first: the live network namespace has no network to build it in)
helm:
	tools/install-helm.sh

## live-binaries: build the live control plane's binaries into .bin/<name>-<version> (cached;
## first build ~10 minutes on 2 cores, then nothing: see docs/live.md)
live-binaries:
	tools/live/build.sh

## test-live: a live control plane (etcd, kube-apiserver, Crossplane, provider-kubernetes,
## stand-ins) in a private network namespace, and every example through it (docs/live.md)
test-live: setup cli live-binaries helm
	tools/live/netns.sh $(PY) -m pytest -q -m live tests/live $(LIVE_ARGS)

## playground: the live control plane left running in the background with one module installed
## from its Configuration package (MODULE=async-actor, FORM=v1-claims|v2-namespaced); prints a
## kubeconfig and the commands to try an example (docs/playground.md)
playground: setup cli live-binaries
	@$(PY) tools/live/playground.py up $(if $(MODULE),--module $(MODULE),) $(if $(FORM),--form $(FORM),)

## playground-down: stop the playground (every process, its namespaces) and remove its state
## but the logs; says what it stopped (nothing running: says so)
playground-down:
	@$(PYTHON) tools/live/playground.py down

## live-crds: rederive tests/live/crds from the upstream CRDs (CRDS=../shared/crds)
live-crds: setup
	$(PY) tools/live/derive_crds.py $(if $(CRDS),--crds $(CRDS),)

## lint: ruff (checks and format), mypy, and generated files up to date
lint: setup lock-check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) tools/generate_apis.py --check
	$(PY) tools/generate_helm_chart.py --check
	$(PY) tools/make_activation_policy.py --check
	$(PY) tools/make_configurations.py --check

## format: rewrite the Python sources in ruff's format (make lint checks it)
format: setup
	$(VENV)/bin/ruff format .

## package: build/function-platform.xpkg: with the runtime image (IMAGE=...) when docker works,
## the package metadata alone otherwise; it says which. Then one Configuration package per module
## and form, build/platform-<module>[-namespaced].xpkg (tools/make_configurations.py --build)
package: setup cli
	tools/build-package.sh
	$(PY) tools/make_configurations.py --build build

## release: VERSION=x.y.z (= function/__version__.py) REGISTRY=<repo> (default localhost:5000/platform):
## the runtime image without a Docker daemon, the function package embedding it and the ten
## Configuration packages, into build/release/ (docs/release.md)
REGISTRY ?= localhost:5000/platform
# refused before anything is set up or built
ifneq ($(filter release,$(MAKECMDGOALS)),)
ifeq ($(VERSION),)
$(error make release needs VERSION=<version>, the one in function/__version__.py (docs/release.md))
endif
endif
release: setup cli
	$(PY) tools/release.py --version $(VERSION) --registry $(REGISTRY)

## test-release: build a release into a temporary directory and run its image's entrypoint from
## the unpacked root file system (chroot, no Docker): one RunFunction answered as uid 65532
test-release: setup cli
	$(PY) -m pytest -q -m release tests/release

## uv: bootstrap the pinned uv into .bin/ and print its path (tests use it)
uv: $(UV)
	@echo $(UV)

## lock: re-resolve every dependency to the newest allowed by pyproject.toml (uv.lock), and
## export the image's runtime closure (requirements.lock); `git diff` shows what moved
lock: $(UV)
	$(UV) lock --upgrade --python $(PYTHON)
	$(RUNTIME_LOCK) > requirements.lock

## lock-check: uv.lock matches pyproject.toml and requirements.lock matches uv.lock
lock-check: $(UV)
	@$(UV) lock --check --quiet --python $(PYTHON) \
	  || { echo "uv.lock does not match pyproject.toml: run make lock"; exit 1; }
	@$(RUNTIME_LOCK) | diff -u requirements.lock - \
	  || { echo "requirements.lock is stale: run make lock"; exit 1; }

## bench: the benchmark (bench/run.py) when present
bench: setup
	$(PY) bench/run.py

## bench-live: time-to-Ready and function calls per module on the live control plane, phase
## TTL vs a fixed 60 s, side by side (two live runs, ~15 minutes; bench/results.md)
bench-live: setup cli live-binaries
	$(PY) bench/live_ttl.py

## bench-scale: N composites (default 200) of a mixed load at once on the live control plane,
## the function at 2 replicas and the do-nothing floor side by side (two live runs; bench/results.md "Scale")
BENCH_SCALE_N ?= 200
# the run dir (control plane, logs, scale-*.json); kept
BENCH_SCALE_OUT ?= /tmp/bench-scale
bench-scale: setup cli live-binaries
	$(PY) bench/scale.py --n $(BENCH_SCALE_N) --out $(BENCH_SCALE_OUT)

clean:
	rm -rf $(VENV) .bin build dist .pytest_cache .mypy_cache .ruff_cache
