"""Which project code the fast tests run, and the check that every module keeps a fast test.

`make test-fast` leaves out the slow tests (browser, site build, oracle, figure, bench: tests/conftest.py
marks them). That must not leave a module of `src/chapter2` or `docs/hooks` without a test in the loop, so
this plugin watches what the fast tests run:

- Each function of those modules is compiled with one extra first statement (after its docstring) that adds
  the module's path to `HITS`: a set.add per call, too cheap to measure, where a `sys.settrace` tracer made
  the tests 60 % slower (measured on 311 tests: 25 s of CPU, 40 s traced). Line numbers, docstrings,
  signatures and source stay as they were. Triton's `@jit` kernels are left alone (Triton reads their source).
- After each test, the modules whose functions ran are credited to that test if it is fast (no `slow` and no
  `browser` mark). A module counts as covered only when a fast test ran one of its functions: importing it
  does not count, nor do the functions its top level calls while it is imported.
- Snippets (`snippets/*.py`) are scripts: a fast test parametrized with a snippet's path runs it
  (tests/test_snippets.py, in a subprocess), and that counts.
- When a session has run every fast test of the tree (make test-fast, or make test, which runs them first:
  tests/conftest.py orders them so), a module that no fast test ran fails the session, by name; so does an
  entry of `NOT_FAST` that a fast test now covers (the list must not go stale). A partial run (one file, -k,
  -x) checks nothing.

Modules without a function (a package's docstring and constants) have nothing to run and are not listed.
`NOT_FAST` names the few modules whose code only runs in a subprocess, on a GPU or in a matplotlib drawing,
each with the test that runs it; that test must exist.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import hashlib
import importlib.machinery
import marshal
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WATCHED = ("src/chapter2/", "docs/hooks/")  # modules whose functions are probed
SNIPPETS = "snippets/"

# Modules no fast test runs, each with the (slow) test that does and why.
_DRAWS = "tests/test_figures_svg.py::test_every_page_figure_has_a_phone_drawing_whose_text_reads_on_a_phone"
_BUILDS = "tests/test_site_build.py::test_strict_build_produces_the_whole_site"
_DEVICE_CHECK = "tests/test_bench.py::test_device_check_script_dry_run"
NOT_FAST = {
    **{f"src/chapter2/host/figures/{name}.py": (_DRAWS, "draws a figure with matplotlib (figure tests)")
       for name in ("kv_cache", "matmul", "measured", "moe", "roofline", "ssm", "stepper", "token_walk")},
    "src/chapter2/host/bench/_harness.py": ("tests/test_bench.py::test_cpu_benchmark_writes_a_result",
                                            "times and writes a benchmark (bench test)"),
    "src/chapter2/host/bench/cpu.py": ("tests/test_bench.py::test_cpu_benchmark_writes_a_result",
                                       "the CPU attention benchmark (bench test)"),
    "src/chapter2/host/bench/__main__.py": (_DEVICE_CHECK, "the benchmarks' command line, run in a subprocess"),
    "src/chapter2/host/bench/gpu.py": (_DEVICE_CHECK, "the GPU benchmark: on a CPU only through the device "
                                                      "check's dry run, in a subprocess"),
    "src/chapter2/host/kernels/validate.py": (_DEVICE_CHECK, "validates the Triton kernels in the device check's "
                                                             "subprocess"),
    "src/chapter2/host/kernels/compile_check.py": ("tests/test_kernels.py::test_kernels_compile_for_hopper",
                                                   "compiles every kernel variant for sm_90 in a subprocess"),
    "docs/hooks/pycompile.py": (_BUILDS, "compiles Pyodide's bytecode with node; only the site build runs it"),
}

PROBE = "__c2_probe__"
HITS: set[str] = set()  # paths (relative to ROOT) of the watched modules whose functions ran since the last reset
setattr(builtins, PROBE, HITS)  # the probed functions find it as a builtin: no module's namespace changes


def relative(path: str) -> str | None:
    """`path` relative to ROOT when it is a watched module, else None."""
    rel = os.path.relpath(os.path.abspath(path), ROOT).replace(os.sep, "/")
    return rel if rel.startswith(WATCHED) and rel.endswith(".py") else None


def probed_code(source: bytes | str, path: str, rel: str):
    """The module's code, each function starting with `__c2_probe__.add(rel)` (after its docstring)."""
    tree = ast.parse(source, path)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if any("jit" in ast.unparse(d) for d in node.decorator_list):
            continue  # a Triton kernel: Triton compiles its source, not this code
        body = node.body
        first = 1 if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str) else 0
        call = ast.Expr(ast.Call(ast.Attribute(ast.Name(PROBE, ast.Load()), "add", ast.Load()),
                                 [ast.Constant(rel)], []))
        for new in ast.walk(call):  # on the line of the statement it precedes
            ast.copy_location(new, body[min(first, len(body) - 1)])
        node.body = body[:first] + [call] + body[first:]
    return compile(tree, path, "exec", dont_inherit=True)


_CACHE = ROOT / ".pytest_cache" / "c2-probe"  # one file per module: its key, then its probed code (marshal)
_SALT = hashlib.sha1(Path(__file__).read_bytes() + sys.version.encode()).digest()


def cached_probed_code(source: bytes, path: str, rel: str):
    """`probed_code`, kept between runs like a .pyc (about 1 s of CPU per process for the whole package) unless
    Python is told not to write bytecode (PYTHONDONTWRITEBYTECODE; the Makefile's test targets allow it)."""
    key = hashlib.sha1(_SALT + path.encode() + source).digest()
    file = _CACHE / (hashlib.sha1(path.encode()).hexdigest() + ".bin")
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        data = file.read_bytes()
        if data[:20] == key:
            return marshal.loads(data[20:])
    code = probed_code(source, path, rel)
    if not sys.dont_write_bytecode:
        with contextlib.suppress(OSError):
            _CACHE.mkdir(parents=True, exist_ok=True)
            partial = file.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(key + marshal.dumps(code))
            os.replace(partial, file)  # whole or not at all, when two workers write it at once
    return code


_get_code = importlib.machinery.SourceFileLoader.get_code


def _probed_get_code(self, fullname):
    rel = relative(self.path)
    if rel is None:
        return _get_code(self, fullname)
    return cached_probed_code(self.get_data(self.path), self.path, rel)


_exec_module = importlib.machinery.SourceFileLoader.exec_module


def _exec_module_unprobed(self, module):
    """Run a module's top level; what its functions do meanwhile (an alt text computed at import) is the
    import's, not the running test's: which test imports a module first is chance."""
    if relative(self.path) is None:
        return _exec_module(self, module)
    before = set(HITS)
    try:
        _exec_module(self, module)
    finally:
        HITS.intersection_update(before)


# Every import of a .py file goes through SourceFileLoader.get_code (a package import, a hook loaded with
# spec_from_file_location, runpy.run_module); only the watched files are compiled differently.
importlib.machinery.SourceFileLoader.get_code = _probed_get_code
importlib.machinery.SourceFileLoader.exec_module = _exec_module_unprobed


@functools.cache
def modules() -> list[str]:
    """Every watched module that defines a function, and every snippet (read once per process: 0.5 s)."""
    found = []
    for folder in (*WATCHED, SNIPPETS):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_bytes(), str(path))
            if folder == SNIPPETS or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree)):
                found.append(rel)
    return found


def problems(covered: set[str], nodeids: set[str]) -> list[str]:
    """What is wrong with the fast loop's coverage, given the modules fast tests ran and every collected test."""
    out = []
    for rel in modules():
        if rel in NOT_FAST:
            if rel in covered:
                out.append(f"{rel}: a fast test runs it now; remove it from NOT_FAST in tests/_fast_coverage.py")
        elif rel not in covered:
            out.append(f"{rel}: no fast test runs any of its functions (make test-fast would not notice it break)")
    for rel, (test, _why) in NOT_FAST.items():
        if not (ROOT / rel).exists():
            out.append(f"NOT_FAST names {rel}, which does not exist")
        if test not in nodeids:
            out.append(f"NOT_FAST says {test} runs {rel}, but there is no such test")
    return out


def is_fast(item) -> bool:
    return item.get_closest_marker("slow") is None and item.get_closest_marker("browser") is None


def snippet_params(item) -> set[str]:
    """Snippets this test runs: the snippet paths it is parametrized with."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    found = set()
    for value in params.values():
        if isinstance(value, Path) and value.suffix == ".py":
            rel = os.path.relpath(value, ROOT).replace(os.sep, "/")
            if rel.startswith(SNIPPETS):
                found.add(rel)
    return found


class FastCoverage:
    """The pytest plugin: credits probed modules to fast tests, merges the workers' records, checks at the end."""

    def __init__(self, config):
        self.config = config
        self.all_fast: set[str] = set()  # every fast test of this collection (before -m/-k deselection)
        self.all_ids: set[str] = set()
        self.fast_ran: set[str] = set()
        self.covered: set[str] = set()
        self.whole_tree = False

    def collected(self, items) -> None:
        """Called by tests/conftest.py with every collected test, marks applied, before any deselection."""
        self.all_ids = {item.nodeid for item in items}
        self.all_fast = {item.nodeid for item in items if is_fast(item)}
        collected_files = {str(item.path) for item in items}
        test_files = {str(p) for p in (ROOT / "tests").rglob("test_*.py")}
        self.whole_tree = test_files <= collected_files

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        HITS.clear()
        yield
        if is_fast(item):
            self.fast_ran.add(item.nodeid)
            self.covered |= HITS | snippet_params(item)

    def _record(self) -> dict:
        return {"all_fast": sorted(self.all_fast), "all_ids": sorted(self.all_ids), "whole_tree": self.whole_tree,
                "fast_ran": sorted(self.fast_ran), "covered": sorted(self.covered)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        """xdist's controller: merge a worker's record."""
        record = getattr(node, "workeroutput", {}).get("c2_fast_coverage")
        if record:
            self.all_fast |= set(record["all_fast"])
            self.all_ids |= set(record["all_ids"])
            self.whole_tree |= record["whole_tree"]
            self.fast_ran |= set(record["fast_ran"])
            self.covered |= set(record["covered"])

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workeroutput"):  # an xdist worker: hand the record to the controller
            self.config.workeroutput["c2_fast_coverage"] = self._record()
            return
        self.report = []
        if self.whole_tree and self.all_fast and self.all_fast <= self.fast_ran:
            self.report = problems(self.covered, self.all_ids)
            if self.report and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if getattr(self, "report", None):
            terminalreporter.section("fast-loop coverage (tests/_fast_coverage.py)", red=True, bold=True)
            for line in self.report:
                terminalreporter.line(line, red=True)
