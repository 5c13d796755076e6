# Two commands do everything on a fresh machine (see README):
#   make serve   set up, build the site (figures, wheel, Pyodide) and serve it on 127.0.0.1:8000
#   make test    set up and run the whole test suite (unit, snippets, site build, browser)
SHELL := /bin/bash
PY := .venv/bin/python
PIP := .venv/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
# torch is pinned here, for this project's machines (a CPU build lies on their disk);
# the package itself only asks for torch>=2.4 in its [torch] extra.
TORCH_PIN ?= torch==2.13.0
# extra pip options for that one install, e.g. the CPU wheel index on GitHub's runners (.github/workflows)
TORCH_INDEX ?=

.PHONY: setup lock serve build lint lint-workflows test test-fast bench clean

setup: .venv/.installed node_modules/.installed chromium

# Python dependencies come from pylock.toml (every package pinned, with its sha256; pip checks them):
# pip itself first (a pinned, hashed pip that reads pylock.toml), then the lock, then torch alone at
# TORCH_PIN (its dependencies are in the lock), then the project (editable, no dependencies of its own).
PIP_BOOTSTRAP := pip==26.3 --hash=sha256:f3b60b20ffaadd4415ed7957212a38ac63fa4c5fa375bd0f4a797777940fad13

.venv/.installed: pyproject.toml pylock.toml
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install --quiet --require-hashes -r <(echo "$(PIP_BOOTSTRAP)")
	$(PIP) install --quiet -r pylock.toml
	$(PIP) install --quiet --no-deps $(TORCH_INDEX) "$(TORCH_PIN)"
	$(PIP) install --quiet --no-deps -e .
	touch $@

# after changing dependencies in pyproject.toml: regenerate pylock.toml (scripts/lock.py says how)
lock:
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install --quiet --require-hashes -r <(echo "$(PIP_BOOTSTRAP)")
	$(PY) scripts/lock.py --torch-pin "$(TORCH_PIN)"

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian's Chromium for the browser tests (never a browser download by a test tool).
chromium:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Chromium is missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; fi

# building and serving the site need no browser: only the tests do
build: .venv/.installed node_modules/.installed
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

# mkdocs serve rebuilds itself when docs/ or mkdocs.yml change. The package, the page layer,
# the snippets and the build hook are Python that the serving process has already imported,
# and a rebuild in that process would show the old numbers: a change there restarts it
# (a fresh process, a full build with the new code). watchmedo comes with watchdog (mkdocs).
serve: .venv/.installed node_modules/.installed
	@echo "make serve: rebuilds on changes in docs/ and mkdocs.yml, restarts on changes in src/chapter2, snippets/, docs/hooks/"
	NO_MKDOCS_2_WARNING=1 .venv/bin/watchmedo auto-restart --no-restart-on-command-exit --recursive \
	  --directory src/chapter2 --directory snippets --directory docs/hooks \
	  --ignore-directories --ignore-patterns '*/__pycache__/*;*.pyc' --debounce-interval 1 -- \
	  .venv/bin/mkdocs serve --strict -a $(HOST):$(PORT)

# pytest-xdist: one worker per core; the site is built once per run and shared (tests/conftest.py)
WORKERS ?= auto

# ruff on the Python; actionlint (with shellcheck on run: scripts) and zizmor (offline, the
# security audit) on the GitHub workflows, failing on findings of medium severity or above
ACTIONLINT := .venv/bin/actionlint -shellcheck=.venv/bin/shellcheck -pyflakes=
ZIZMOR := .venv/bin/zizmor --quiet --offline --no-progress --color=never --min-severity=medium
WORKFLOWS ?= .github/workflows

lint: setup
	.venv/bin/ruff check .
	$(MAKE) --no-print-directory lint-workflows

# (needs the venv of `make setup`; tests/test_workflows.py runs it on bad workflows too)
# both always run, so one pass shows every finding
lint-workflows:
	@rc=0; \
	  $(ACTIONLINT) $(wildcard $(WORKFLOWS)/*.yml $(WORKFLOWS)/*.yaml) || rc=1; \
	  $(ZIZMOR) $(WORKFLOWS) || rc=1; \
	  exit $$rc

test: lint
	.venv/bin/python -m pytest -q -n $(WORKERS)

# the edit-test loop: everything but the browser and the slow tests (no site build: a test that needs the
# built site is slow, tests/conftest.py). Measured on a quiet 2-core machine (2026-12-01, at 796a5ed):
# 1,527 tests, 48 s wall, 92 s CPU (user+sys); before issue 20: 2,009 tests, 78.9 s wall, 150 s CPU
# At 08908a6, with issues 22 and 25's new families and pages: 1,814 tests, 72 s wall, 127 s CPU
test-fast: lint
	.venv/bin/python -m pytest -q -n $(WORKERS) -m "not browser and not slow"

bench: setup
	.venv/bin/python -m chapter2.host.bench cpu

clean:
	rm -rf site .cache .pytest_cache
