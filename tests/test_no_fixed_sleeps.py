"""No test sleeps for a fixed time: a test waits on a condition the page or the process sets (a marker, a
counter), so it neither fails on a slow machine nor idles on a fast one.

Caught: time.sleep, asyncio.sleep, a bare sleep(...), Playwright's wait_for_timeout, and a promise that
only resolves after a timer in JavaScript handed to the page (`new Promise(r => setTimeout(r, 300))`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLEEPS = {"sleep", "wait_for_timeout"}
JS_SLEEP = re.compile(r"Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\s*,(?!\s*0\s*\))[^)]+\)")


def _sleeps(source: str, filename: str) -> list[str]:
    if not any(word in source for word in (*SLEEPS, "setTimeout")):
        return []  # nothing to parse
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in SLEEPS:
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"{filename}:{node.lineno}: {m.group(0)}" for m in JS_SLEEP.finditer(node.value)]
    return found


def test_no_test_sleeps_for_a_fixed_time():
    found = [hit for path in sorted(TESTS.rglob("*.py")) if path.name != Path(__file__).name  # this file names them
             for hit in _sleeps(path.read_text(), str(path.relative_to(TESTS.parent)))]
    assert not found, "fixed sleeps (wait on a condition instead):\n" + "\n".join(found)


def test_the_scan_sees_each_kind_of_sleep():
    """The checker bites: each form of a fixed sleep is found; waits on a condition are not."""
    sleeps = ["import time\ntime.sleep(0.3)", "import asyncio\nasync def f():\n    await asyncio.sleep(1)",
              "from time import sleep\nsleep(2)", "page.wait_for_timeout(300)",
              "page.evaluate('() => new Promise(r => setTimeout(r, 300))')",
              "page.evaluate('async () => { await new Promise((done) => setTimeout(done, ms)); }')"]
    for source in sleeps:
        assert _sleeps(source, "t.py"), source
    waits = ["page.wait_for_function('() => document.body.dataset.ready')",
             "page.evaluate('async () => { while (!ok()) await new Promise(r => setTimeout(r, 0)); }')",
             "page.evaluate('new Promise((_, reject) => setTimeout(() => reject(new Error(1)), 30000))')"]
    for source in waits:
        assert not _sleeps(source, "t.py"), source
