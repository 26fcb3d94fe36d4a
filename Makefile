# actlab's interface: one target per job. `make report` and `make test` set everything up themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The torch wheel installed before anything else. The default is the CPU build that lies on this
# kind of machine's disk; on a GPU box use e.g. `make setup TORCH=torch` to take PyPI's CUDA build.
TORCH ?= torch==2.13.0
# Debian packages the tests and default studies read: Fashion-MNIST, the Python docs (LM corpus),
# and Chromium + its driver (the report is checked in a real browser).
DEB_PACKAGES := dataset-fashion-mnist python3.11-doc chromium chromium-driver
STAMP := $(VENV)/.actlab-installed
PYTEST_ARGS ?=

.PHONY: setup sysdeps test test-all report report-full report-smoke zoo gpu-check lab lint clean help

help:
	@echo "make report       default sweeps on CPU, HTML under reports/"
	@echo "make report-full  paper-scale sweeps (hours; meant for a GPU box)"
	@echo "make report-smoke the full profile, one tiny run per sweep: every page renders (reports/smoke/)"
	@echo "make zoo          the activation zoo: 28 published activations, 3 tasks, 5 seeds (reports/zoo.html; opt-in)"
	@echo "make gpu-check    on a CUDA machine: CUDA tests, benchmarks and the smoke report on the GPU (<= 10 min)"
	@echo "make test         the default test tier (under 10 minutes on 2 cores; what CI runs)"
	@echo "make test-all     every test, the slow tier included"
	@echo "make lab          JupyterLab with the project's kernel"
	@echo "make lint         ruff"
	@echo "make clean        remove runs/, reports/*.html and caches (keeps .venv)"

setup: sysdeps $(STAMP)

# Idempotent: reinstalls only when pyproject.toml changes.
# Byte code: pip would compile every file it installs (~40 s here, most never imported). Instead the venv caches
# the byte code of what is imported, on first import, under .venv/pycache (a .pth line sets the prefix), and
# never beside the sources; it does so even where PYTHONDONTWRITEBYTECODE is set, without which every process
# (each notebook kernel) would compile torch's and actlab's modules again.
BYTECODE_PTH := import os, sys; sys.pycache_prefix = sys.pycache_prefix or os.path.join(sys.prefix, "pycache"); sys.dont_write_bytecode = False
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	echo '$(BYTECODE_PTH)' > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/actlab-bytecode.pth"
	$(PY) -m pip install --quiet --no-compile "$(TORCH)"
	$(PY) -m pip install --quiet --no-compile -e ".[dev,dist]"
	$(PY) -c "from actlab.notebooks import ensure_kernel; ensure_kernel()"
	touch $(STAMP)

# Debian packages: installed only where we are root with apt and they are missing.
sysdeps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
		echo "note: Debian packages missing:$$missing (not root or no apt); tests that need them will skip"; \
	fi

# The default tier leaves out tests marked `slow` (each longer than the tier can afford); test-all runs them too.
# pytest-xdist spreads test files over TEST_WORKERS processes (one file's tests stay in one process, so its
# module fixtures are built once): on 2 cores the default tier takes 6.6 min instead of 12.
TEST_WORKERS ?= 2
test: setup
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile -m "not slow" $(PYTEST_ARGS)

test-all: setup
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

report: setup
	$(VENV)/bin/actlab report --out reports

report-full: setup
	$(VENV)/bin/actlab report --out reports --profile full

# The full profile's shapes at a tiny budget (each spec's `smoke:`), into runs/smoke and reports/smoke.
report-smoke: setup
	$(VENV)/bin/actlab report --out reports --profile full --smoke

# The activation zoo (issue 36), opt-in and kept out of `make report`'s budget: its sweeps resume, then
# reports/zoo.html, linked from the index. ZOO_PROFILE=full for a GPU box (10 seeds, longer, the LM task).
ZOO_PROFILE ?= default
zoo: setup
	$(VENV)/bin/actlab zoo --out reports --profile $(ZOO_PROFILE)

# A GPU box's check in one go, at most GPU_CHECK_SECONDS: the tests marked `cuda`, the device benchmarks on the GPU
# (ratios labelled with its name) and the smoke report on it. Without CUDA it says so and runs nothing.
GPU_CHECK_SECONDS ?= 600
gpu-check: setup
	@if ! $(PY) -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then \
		echo "gpu-check: no CUDA device present (torch.cuda.is_available() is False); nothing was run"; exit 0; \
	fi; \
	$(PY) -c "import torch; print('gpu-check on', torch.cuda.device_count(), 'device(s):', torch.cuda.get_device_name(0))"; \
	ACTLAB_TEST_CUDA=1 ACTLAB_DEVICE=cuda timeout $(GPU_CHECK_SECONDS) bash -c '\
		$(PY) -m pytest -q -p no:cacheprovider -m cuda && \
		$(VENV)/bin/actlab bench --quick --device cuda --out reports/gpu-check/bench.json && \
		$(VENV)/bin/actlab report --profile full --smoke --runs runs/gpu-check --out reports/gpu-check'; \
	status=$$?; if [ $$status = 124 ]; then echo "gpu-check: over $(GPU_CHECK_SECONDS) s"; fi; exit $$status

lab: setup
	$(VENV)/bin/jupyter lab notebooks

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf runs reports/*.html reports/*.json .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
