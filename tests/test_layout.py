"""The folder layout says what runs where: everything outside `chapter2.host` is the numpy core."""

from __future__ import annotations

import subprocess
import sys


def test_everything_outside_host_imports_with_numpy_alone():
    """The core (pages and calculators included) loads with numpy and the standard library only:
    it is what the browser wheel carries, and what `pip install chapter2` needs without extras."""
    code = (
        "import importlib, pkgutil, sys, chapter2, chapter2.pages as pages\n"
        "def walk(pkg):\n"  # pkgutil.walk_packages would import chapter2.host to look inside it
        "    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if info.name != 'chapter2.host':\n"
        "            mod = importlib.import_module(info.name)\n"
        "            if info.ispkg:\n"
        "                walk(mod)\n"
        "walk(chapter2)\n"
        "pages.names()\n"
        "bad = {m.split('.')[0] for m in sys.modules} & {'torch', 'triton', 'matplotlib', 'scipy', 'transformers',\n"
        "                                                  'safetensors', 'tokenizers', 'mpmath'}\n"
        "host = [m for m in sys.modules if m.startswith('chapter2.host')]\n"
        "assert not bad and not host, (bad, host)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
