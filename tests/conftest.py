"""Shared fixtures: the built site, a static server on 127.0.0.1, and Debian's Chromium.

The site is built once per test session with `mkdocs build --strict` (or taken
from CHAPTER2_SITE_DIR when a caller already built it); every test that needs it
is marked `slow`, so `make test-fast` never builds it. Browser tests need
Debian's chromium-headless-shell and chromium (see HEADLESS_SHELL); in CI (CI=true) a missing browser is an error,
not a skip.

The markers (pyproject.toml lists them): `slow` is what `make test-fast` leaves out; `oracle`, `figure` and
`bench` say why, and each implies `slow`. `pytest_collection_modifyitems` below sets them from what a test
uses, so most tests need no decorator; tests/_fast_coverage.py checks that every module keeps a fast test.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import json
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
# Two builds of Debian's Chromium, both from its chromium source package (the same Blink and V8 release).
# - The browser tests run in chromium-headless-shell (the `browser` fixture): Chromium's headless build without the
#   desktop browser around it, which Playwright also uses for headless runs. Measured here, quiet, 2026-12-03 (Chromium
#   156, /proc/stat CPU seconds): six section pages loaded in turn cost 5.2 to 6.5 CPU seconds there against 9.8 to
#   12.2 in the full browser, and test_reading's page audit and phone test 88 against 150.
# - A tap on a touch screen is the exception: the headless shell synthesises no hover from it, which a phone's browser
#   does (Material shows an abbreviation's title on that hover). Tests of what a tap shows use the full browser (the
#   `chromium` fixture), as do the scripts that measure pages for the site (scripts/*.py).
# CHAPTER2_HEADLESS_SHELL=/usr/bin/chromium runs every browser test in the full browser (it passes there too).
CHROMIUM = os.environ.get("CHAPTER2_CHROMIUM", "/usr/bin/chromium")
HEADLESS_SHELL = os.environ.get("CHAPTER2_HEADLESS_SHELL", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    # WebAssembly compiled by V8's baseline compiler (Liftoff) only, never again by its optimising one: a page's
    # Pyodide start compiles megabytes of wasm, and the tests run little Python on each page. Measured here, quiet,
    # 2026-12-03: six calculator pages started in turn 22.6 to 24.1 CPU s against 22 to 33 by default, and
    # test_browser_calculators.py 152 CPU s against 175. What V8 compiles with changes speed only, never a result.
    "--js-flags=--liftoff-only",
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
    # make test runs with --dist loadgroup: a slow test that shares a module- or class-scoped fixture (a page
    # audit, a CDN-mode build) goes to one worker with the rest of its module, so the fixture is computed once in
    # the run and not once per worker. Fast tests stay one by one (their node ids stay plain: _fast_coverage).
    groups = {}
    for item in items:
        if not _fast_coverage.is_fast(item) and _shares_a_fixture(item):
            groups[item.nodeid] = item.path.relative_to(ROOT).as_posix()
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    _record_groups(config, groups)
    # The fast tests first (stable: each group keeps its order): make test reports their failures within a
    # minute, and every worker runs its fast tests before a slow test can warm a cache they would have missed,
    # so which modules the fast tests run does not depend on scheduling (tests/_fast_coverage.py). Then the slow
    # tests that need no site, which keep both workers busy while the site builds (pytest_collection_finish).
    items.sort(key=lambda item: (not _fast_coverage.is_fast(item), _needs_site(item)))
    config.pluginmanager.get_plugin("c2-fast-coverage").collected(items)


def _run_dir(tmp_path_factory) -> Path:
    """The temporary folder of the whole run: a worker's basetemp sits in the controller's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _groups_file(config) -> Path:
    return _run_dir(config._tmp_path_factory) / "xdist-groups.json"


def _record_groups(config, groups: dict) -> None:
    """A worker writes {node id: group} where the controller's scheduler reads it. (xdist 3.8's loadgroup puts the
    group in the node id through `item._nodeid`, which pytest 9.2 no longer reads: its scheduler never sees a group.)"""
    if os.environ.get("PYTEST_XDIST_WORKER") and getattr(config.option, "loadgroup", False):  # (a worker's dist is "no")
        path = _groups_file(config)
        tmp = path.with_suffix(f".{os.environ['PYTEST_XDIST_WORKER']}")
        tmp.write_text(json.dumps(groups))
        os.replace(tmp, path)  # every worker collects the same tests and writes the same map


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup, with the groups the workers recorded (_record_groups): a group's tests go to one worker,
    every other test is scheduled on its own, in collection order (make test passes --no-loadscope-reorder)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class RecordedGroups(LoadGroupScheduling):
        def schedule(self):
            if self.collection is None:  # the first call: every worker has collected (and written the map)
                path = _groups_file(self.config)
                self.groups = json.loads(path.read_text()) if path.exists() else {}
            super().schedule()

        def _split_scope(self, nodeid):
            group = getattr(self, "groups", {}).get(nodeid)
            return group if group is not None else super()._split_scope(nodeid)

    return RecordedGroups(config, log)


def _needs_site(item) -> bool:
    return "site_dir" in getattr(item, "fixturenames", ())


def _shares_a_fixture(item) -> bool:
    """True if the test uses a fixture computed once per module or class (on each worker that runs one of them)."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values()
    return any(d.scope in ("module", "class", "package") for ds in defs for d in ds)


def pytest_configure(config):
    config.pluginmanager.register(_fast_coverage.FastCoverage(config), "c2-fast-coverage")


def _site_paths(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the site, its lock, the file that says it is built), shared by the workers of one run."""
    shared = _run_dir(tmp_path_factory)
    return shared / "site", shared / "site.lock", shared / "site.built"


def _build_site(out: Path, done: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if proc.returncode == 0:
        done.write_text("ok\n")
    return proc


_BACKGROUND: list[threading.Thread] = []


def pytest_collection_finish(session):
    """Under pytest-xdist, the first worker whose tests (after -m/-k) need the site starts building it at once, in
    a thread that holds the site's lock: the build runs while the workers run the fast tests and the slow tests
    that need no site, and `site_dir` waits on the lock. (A failed build is left to `site_dir`, which builds
    again and reports it.)"""
    if not os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("CHAPTER2_SITE_DIR"):
        return
    if not any(_needs_site(item) for item in session.items):
        return
    out, lock_path, done = _site_paths(session.config._tmp_path_factory)
    try:  # one background build per run, started by whichever worker gets here first
        os.close(os.open(lock_path.with_suffix(".started"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return
    lock = open(lock_path, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # taken here, before any test of this worker can ask for the site

    def build():
        with lock:
            if not done.exists():
                _build_site(out, done)

    _BACKGROUND.append(threading.Thread(target=build, name="c2-site-build", daemon=True))
    _BACKGROUND[-1].start()


def pytest_unconfigure(config):
    for thread in _BACKGROUND:  # a worker whose build is on its way waits for it: no half-written site is left
        thread.join()


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """The site, built once per test run: under pytest-xdist the workers share one build (a file lock), started
    in the background as soon as a worker has collected a test that needs it (pytest_collection_finish)."""
    given = os.environ.get("CHAPTER2_SITE_DIR")
    if given:
        return Path(given)
    out, lock_path, done = _site_paths(tmp_path_factory)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a build on its way holds it; the others wait, then reuse the site
        if not done.exists():
            proc = _build_site(out, done)
            assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
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
def _playwright():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@contextlib.contextmanager
def _launched(playwright, executable: str, package: str):
    """Debian's `package` at `executable`, headless with CHROMIUM_ARGS; a missing one fails in CI, else skips."""
    if not Path(executable).exists() or shutil.which(executable) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{package} not found at {executable}: CI must install it (apt-get install {package})")
        pytest.skip(f"{package} not found at {executable} (install Debian's {package} package: make setup)")
    b = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def browser(_playwright):
    """Debian's chromium-headless-shell (see HEADLESS_SHELL above), launched once per worker."""
    with _launched(_playwright, HEADLESS_SHELL, "chromium-headless-shell") as b:
        yield b


@pytest.fixture(scope="session")
def chromium(_playwright):
    """Debian's full chromium, headless: for what the headless shell does not do as a reader's browser does (a tap's
    hover), launched once per worker that runs such a test."""
    with _launched(_playwright, CHROMIUM, "chromium") as b:
        yield b


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
# A reader whose browser asks to save data: a calculator in view does not start Python (runtime.js). For tests of
# what a page shows before any use (layout, figures, equations): a Pyodide start costs Chromium 2.5 to 3 CPU seconds,
# and 181 of them ran in the browser suite, many on pages loaded only to be measured (counted 2026-12-03).
SAVE_DATA = "Object.defineProperty(navigator, 'connection', {value: {saveData: true}, configurable: true});"


# Material's site search without its worker: the page still fetches search/search_index.json and hands it over, and
# nothing builds the index. That worker builds it (lunr) on every page load, which a reader with instant navigation
# pays once a visit and a test on every page it loads: a Save-Data page load cost 0.2 CPU s less without it (4.8
# against 3.7 to 4.0 CPU s for five pages, measured twice, 2026-12-03). local_only_context leaves it out unless a
# test asks for search (the search test, instant navigation, test_reading's audit of every page).
NO_SEARCH_WORKER = """(() => { const Worker = window.Worker;
  window.Worker = class extends Worker { constructor(url, options) {
    if (/\\/workers\\/search\\.[\\w.]*\\.js$/.test(String(url))) {
      const idle = new EventTarget(); idle.postMessage = () => {}; idle.terminate = () => {}; return idle; }
    super(url, options); } }; })();"""


# A Web Worker that never answers: what a page shows can only come from what the build drew (steppers, token walk,
# layout measured before Python could change it).
INERT_WORKER = "window.Worker = class { constructor() {} postMessage() {} terminate() {} addEventListener() {} };"


@contextlib.contextmanager
def local_only_context(browser, *, search: bool = False, save_data: bool = False, inert_worker: bool = False,
                       **options):
    """A browser context whose requests may only reach 127.0.0.1, without site search unless `search`.

    Every request is listed in `.requests`; any that tried to leave is aborted
    and listed in `.blocked` (also those a route handler never sees). Without `search`, Material's search worker is
    left out (NO_SEARCH_WORKER). `save_data`: the reader's browser asks to save data (SAVE_DATA), so no calculator
    starts Python by itself. `inert_worker`: every Web Worker is inert (INERT_WORKER), so Python never answers.
    `options` go to `browser.new_context`.
    """
    context = browser.new_context(**options)
    context.requests, context.blocked = [], []
    for wanted, script in ((not search, NO_SEARCH_WORKER), (save_data, SAVE_DATA), (inert_worker, INERT_WORKER)):
        if wanted:
            context.add_init_script(script)

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
