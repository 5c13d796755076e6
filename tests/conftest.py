"""Shared fixtures: the built site, a static server on 127.0.0.1, and Debian's Chromium.

The site is built once per test session with `mkdocs build --strict` (or taken
from CHAPTER2_SITE_DIR when a caller already built it); every test that needs it
is marked `slow`, so `make test-fast` never builds it. Browser tests need
/usr/bin/chromium; in CI (CI=true) a missing browser is an error, not a skip.

The markers (pyproject.toml lists them): `slow` is what `make test-fast` leaves out; `oracle`, `figure` and
`bench` say why, and each implies `slow`. `pytest_collection_modifyitems` below sets them from what a test
uses, so most tests need no decorator; tests/_fast_coverage.py checks that every module keeps a fast test.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest
from hypothesis import settings

import _fast_coverage  # before any test module imports chapter2: it compiles the package's functions probed

# pytest-xdist runs one worker per core, so each worker's BLAS and torch get one thread: two workers with a
# thread per core each oversubscribe the machine and spin waiting on each other (test_tiny_lm.py: 24 s of CPU
# instead of 9 on a busy 2-core machine). Set before any test module imports numpy or torch.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

# Hypothesis fails an example that takes over 200 ms by default: timing luck on a shared or loaded machine
# (test_context.py's property failed so at load average 28). No test here may depend on time: no deadline.
settings.register_profile("chapter2", deadline=None)
settings.load_profile("chapter2")

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHAPTER2_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


# What a test uses that makes it an oracle or a figure test: a module (or a submodule of it) or a name.
ORACLES = ("transformers", "diffusers", "_diffusers_oracle", "FlopCounterMode")
FIGURES = ("matplotlib", "render_svg", "build_all")
REASONS = ("oracle", "figure", "bench")


def _words(fn, seen: set) -> set[str]:
    """The names and string constants in `fn`'s code (nested functions, lambdas and comprehensions included),
    the modules of the globals those names are bound to, and the same for each function of tests/ it names."""
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return set()
    seen.add(code)
    words, stack, env = set(), [code], getattr(fn, "__globals__", {})
    while stack:
        code = stack.pop()
        for name in code.co_names:
            words.add(name)
            value = env.get(name)
            if isinstance(value, types.ModuleType):
                words.add(value.__name__)
            elif isinstance(value, (types.FunctionType, type)):
                words.add(getattr(value, "__module__", "") or "")
                if isinstance(value, types.FunctionType) and value.__code__.co_filename.startswith(str(ROOT / "tests")):
                    words |= _words(value, seen)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        words |= {c for c in code.co_consts if isinstance(c, str)}
    return words


@functools.cache
def _all_words(fn, fixtures: tuple) -> frozenset[str]:
    seen: set = set()
    return frozenset(_words(fn, seen).union(*(_words(f, seen) for f in fixtures)))


def uses(item, what) -> bool:
    """True if the test's function, a fixture it uses or a test helper they call names one of `what`
    (`require("transformers")`, `import diffusers`, `from torch.utils.flop_counter import FlopCounterMode`,
    a global bound to such a module)."""
    fixtures = tuple(d.func for defs in getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values()
                     for d in defs)
    words = _all_words(getattr(item, "function", None), fixtures)
    return any(w == x or w.startswith(x + ".") for w in words for x in what)


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items):
    """The fast loop (make test-fast) runs what is not `slow`; these rules mark a test slow for what it uses:

    - the built site (site_dir, directly or through site_url or a fixture of its own): make test builds it
      once and shares it;
    - `oracle`: transformers or diffusers (models and configs built on the meta device), or torch's
      FlopCounterMode; `figure`: matplotlib or a figure drawn by chapter2.host.figures. Either is also
      marked by hand where the rule cannot see it, as is `bench` (a benchmark run);
    - `oracle`, `figure` and `bench` each imply `slow`.
    """
    for item in items:
        if "site_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("oracle") is None and uses(item, ORACLES):
            item.add_marker(pytest.mark.oracle)
        if item.get_closest_marker("figure") is None and uses(item, FIGURES):
            item.add_marker(pytest.mark.figure)
        if item.get_closest_marker("slow") is None and any(item.get_closest_marker(r) for r in REASONS):
            item.add_marker(pytest.mark.slow)
    # The fast tests first (stable: each group keeps its order): make test reports their failures within a
    # minute, and every worker runs its fast tests before a slow test can warm a cache they would have missed,
    # so which modules the fast tests run does not depend on scheduling (tests/_fast_coverage.py).
    items.sort(key=lambda item: not _fast_coverage.is_fast(item))
    config.pluginmanager.get_plugin("c2-fast-coverage").collected(items)


def pytest_configure(config):
    config.pluginmanager.register(_fast_coverage.FastCoverage(config), "c2-fast-coverage")


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """The site, built once per test run: under pytest-xdist the workers share one build (a file lock)."""
    given = os.environ.get("CHAPTER2_SITE_DIR")
    if given:
        return Path(given)
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out, done = shared / "site", shared / "site.built"
    with open(shared / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds; the others wait, then reuse it
        if not done.exists():
            proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                                  cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
            assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
            done.write_text("ok\n")
    return out


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".svg": "image/svg+xml"}

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="session")
def site_url(site_dir):
    handler = functools.partial(_Handler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}: CI must install it (apt-get install chromium)")
        pytest.skip(f"Chromium not found at {CHROMIUM} (install Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class PageWatch:
    """A page plus everything it logged and every request it tried to make."""

    def __init__(self, context, base):
        self.page, self.base = context.new_page(), base
        self.requests, self.blocked = context.requests, context.blocked  # see local_only_context
        self.console_errors, self.page_errors = [], []
        page = self.page
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))

    def goto(self, path: str):
        self.page.goto(self.base + path.lstrip("/"))
        return self.page

    def assert_clean(self):
        assert not self.page_errors, self.page_errors
        assert not self.console_errors, self.console_errors
        assert not self.blocked, f"requests left 127.0.0.1: {self.blocked}"


LOCAL = ("http://127.0.0.1", "data:", "blob:")


@contextlib.contextmanager
def local_only_context(browser, **options):
    """A browser context whose requests may only reach 127.0.0.1.

    Every request is listed in `.requests`; any that tried to leave is aborted
    and listed in `.blocked` (also those a route handler never sees).
    """
    context = browser.new_context(**options)
    context.requests, context.blocked = [], []

    def route(r):
        url = r.request.url
        context.requests.append(url)
        if url.startswith(LOCAL):
            r.continue_()
        else:
            context.blocked.append(url)
            r.abort()

    context.route("**/*", route)
    context.on("request", lambda req: None if req.url.startswith(LOCAL) or req.url in context.blocked
               else context.blocked.append(req.url))
    try:
        yield context
    finally:
        context.close()


def wait_scrollables_checked(page) -> None:
    """Wait until a11y.js has checked which boxes scroll (and marked them focusable) with the page's fonts in."""
    page.wait_for_function("() => document.fonts.status === 'loaded'"
                           " && document.documentElement.dataset.c2Scrollables === 'checked'")


@pytest.fixture
def watched(browser, site_url):
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        yield PageWatch(context, site_url)
