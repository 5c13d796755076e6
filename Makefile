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

# The three set-ups at once: pip, npm and apt write to different places, so npm's packages (6 to 13 s here) and a
# fresh machine's Chromium download come in while the venv installs. Each one's output shows whole when it ends.
setup:
	@$(MAKE) --no-print-directory -j3 --output-sync=target .venv/.installed node_modules/.installed chromium

# Python dependencies come from pylock.toml (every package pinned, with its sha256, checked on install):
# first a pinned, hashed pip (it writes the lock: `make lock`) and uv (x86-64 and arm64 Linux wheels), then the lock
# read by uv, then torch alone at TORCH_PIN (its dependencies are in the lock) and the project (editable, no
# dependencies of its own), both by pip, which follows this machine's pip configuration (a local torch build).
# uv installs the lock in parallel: 8 to 14 s against pip's 56 s from empty caches, 45 s warm (measured here, quiet,
# 2026-12-03); the same 130 packages, and a changed sha256 in the lock fails the install. uv writes no bytecode:
# Python compiles a module on its first import (--compile-bytecode compiles all of them: 24 s, 44 CPU s).
# --system-certs: uv trusts the machine's certificate store, as pip does.
PIP_BOOTSTRAP := pip==26.3 --hash=sha256:f3b60b20ffaadd4415ed7957212a38ac63fa4c5fa375bd0f4a797777940fad13
UV_BOOTSTRAP := uv==0.13.8 --hash=sha256:e18a57b8b352eb7c8feb317b9f6f533c8f0ad9673fd6cf34bbe3cf1a9f6a8984 \
  --hash=sha256:0b3e8b1a4f5e405e31e2ff33de8af4744831e9f7338539671efbd8c3c94e791d

.venv/.installed: pyproject.toml pylock.toml
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install --quiet --require-hashes -r <(echo "$(PIP_BOOTSTRAP)"; echo "$(UV_BOOTSTRAP)")
	.venv/bin/uv pip install --quiet --system-certs --python $(PY) -r pylock.toml
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

# Debian's Chromium for the browser tests (never a browser download by a test tool): its headless shell runs them,
# the full browser the few that need a reader's browser (a tap's hover) and the page-measuring scripts (tests/conftest.py).
CHROMIUM_DEBS := chromium chromium-headless-shell
chromium:
	@missing="$$(for p in $(CHROMIUM_DEBS); do command -v $$p >/dev/null || echo $$p; done)"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CHROMIUM_DEBS) >/dev/null; \
	  else echo "Missing: $$missing. Run 'sudo apt-get install $(CHROMIUM_DEBS)'" >&2; exit 1; fi; fi

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
# Compiled modules and pytest's rewritten test files are cached in __pycache__ (gitignored) between runs, also
# where the environment says otherwise (PYTHONDONTWRITEBYTECODE): recompiling them costs each worker 4 s of CPU.
PYTEST := PYTHONDONTWRITEBYTECODE= .venv/bin/python -m pytest

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

# everything, the fast tests first (their failures show within a minute), then the slow and browser tests on
# one shared site build. The goal of issue 30 item 6 is a fresh make test within 12 minutes on a quiet 2-core
# machine: reached since ef1ee9e (three runs, 10 min 18 s to 11 min 7 s), set-up by uv. `CI=true bash .ci/run` on a
# fresh clone, the project's 2-core machine quiet:
#   before item 6 (2026-12-01)                         17 min 42 s whole run (CI's pytest: 1,252 s, 2,876 tests)
#   dd3c4c6 (2026-12-03), the browser tests in chromium  pytest 1,005 s, 3,023 tests (pytest alone at a50dec4: 969 s)
#   1923fda (2026-12-03), in chromium-headless-shell     15 min 17 s whole run (1,697 CPU s); pytest 847 s, 3,022 tests
#   940c820 (2026-12-03), the same tests                 13 min 46 s whole run (1,527 CPU s); pytest 763 s
#   b1fde2f (2026-12-03), Save-Data where pages are measured   13 min 57 s and 14 min 32 s (1,487 CPU s); pytest 723, 806 s
#   2c9bfd5 (2026-12-03), no catch-all route, Liftoff only     13 min 5 s (1,385 CPU s); pytest 677 s
#     (the route is back since f34cb36: without it, the HTTP cache on, a page once never went network-idle)
#   44b6848 (2026-12-03), fewer round trips, no search worker  12 min 5 s (1,268 CPU s); pytest 629 s
#   842fbef (2026-12-03), the route back, the rest kept        12 min 46 s (1,366 CPU s); pytest 683 s, 3,023 tests
#     (e6ff454 before it, one test's race not yet fixed: 11 min 6 s, 1,175 CPU s, pytest 596 s, that test failing)
#   46ff333 (2026-12-03), 842fbef and these comments           11 min 6 s (1,164 CPU s); pytest 584 s, 3,023 tests
#   85a777c (2026-12-03), the same tests                       11 min 56 s (1,275 CPU s); pytest 645 s
#   7d08f0e (2026-12-03), the same tests, refactored           11 min 37 s (1,243 CPU s); pytest 632 s
#   466003c (2026-12-03), sweeps by instant navigation         12 min 43 s (1,336 CPU s); pytest 660 s, set-up 90 s
#   ef1ee9e (2026-12-03), 466003c with set-up by uv            10 min 18 s (1,125 CPU s); pytest 588 s, set-up 19 s
#   0335274 (2026-12-03), ef1ee9e and these comments           10 min 21 s (1,132 CPU s); pytest 586 s, 3,023 tests
#   1ff46d5 (2026-12-03), the same tests                       11 min 7 s (1,224 CPU s); pytest 633 s, 3,023 tests
# (two runs of the same tests a few minutes apart differ by 10 %, and pip's set-up alone took 45 to 116 s: measure
# twice before crediting a change)
# What paid: uv installing the lock (19 s of set-up where pip's took 45 to 116 s); --dist loadgroup with the
# scheduler of tests/conftest.py, which keeps a module that shares a page audit or an extra site build on one worker
# (computed once, not once per worker); the site building in the background from the start; fewer page loads (one
# visit per page serves several tests, and the sweeps over every calculator move by instant navigation, so Python
# starts once a sweep); Debian's headless shell for the browser tests, which costs Chromium about half the CPU per
# page load; and what a page load costs Chromium there: wasm compiled once (Liftoff), no search index built where no
# test searches (tests/conftest.py).
# Both cores stay busy and most of the CPU is Chromium's: page loads (1.3 to 2.1 CPU s each, mostly Material's bundle
# and layout), Pyodide starts and axe's audits are what is left. The run ends with its 40 slowest tests and set-ups.
test: lint
	$(PYTEST) -q -n $(WORKERS) --dist loadgroup --no-loadscope-reorder --durations=40

# the edit-test loop: everything but the browser and the slow tests: no site build, and no oracle (transformers,
# diffusers, FlopCounterMode), figure or benchmark test (tests/conftest.py marks them; make test runs them). A run of
# all of it fails if a module of src/chapter2 or docs/hooks, or a snippet, loses its last fast test
# (tests/_fast_coverage.py). Quiet, 2 cores, nothing else running: 2,241 tests, 27 s wall, 49 s CPU, the whole
# `make test-fast` (2026-12-03 at 0335274, a fresh clone); 2,208 tests, 31 s wall, 63 s CPU (user+sys), pytest alone
# (2026-12-02 at 1afac86). Measured 2026-12-02 on the project's 2-core machine shared by six engineers running
# builds and tests (load average 13 to 36, so wall times are several times a quiet run's; CPU seconds compare):
# 2,134 tests in 57 s CPU (user+sys), 298 s wall; the same command just before the markers (efd2085): 2,654
# tests in 130 s CPU, 1,704 s wall, back to back. Earlier quiet runs took 0.52 to 0.57 of their CPU seconds in
# wall time: 1,527 tests, 48 s wall, 92 s CPU (796a5ed); 1,814 tests, 72 s wall, 127 s CPU (08908a6)
test-fast: lint
	$(PYTEST) -q -n $(WORKERS) -m "not browser and not slow"

bench: setup
	.venv/bin/python -m chapter2.host.bench cpu

clean:
	rm -rf site .cache .pytest_cache
