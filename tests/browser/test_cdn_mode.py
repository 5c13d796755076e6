"""CDN mode, against a stand-in CDN on 127.0.0.1 (the real one is not reachable in tests).

The site built with CHAPTER2_PYODIDE=cdn loads Pyodide from the CDN URL, checks
every core file against the hash pinned at build time, and refuses a tampered one.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, _Handler

pytestmark = pytest.mark.browser


class _CdnHandler(_Handler):
    """A CDN answers cross-origin requests (jsDelivr sends Access-Control-Allow-Origin: *)."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


def _serve(directory: Path, handler=_Handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def cdn_site(tmp_path_factory):
    cdn_root = tmp_path_factory.mktemp("cdn")
    full = cdn_root / "pyodide" / "v0.27.7" / "full"
    shutil.copytree(ROOT / "node_modules" / "pyodide", full)
    wheel = next((ROOT / ".cache" / "pyodide").glob("numpy-*.whl"))
    shutil.copy(wheel, full / wheel.name)
    cdn_server, cdn_url = _serve(cdn_root, _CdnHandler)
    site = tmp_path_factory.mktemp("cdn-site")
    env = {**os.environ, "CHAPTER2_PYODIDE": "cdn", "CHAPTER2_PYODIDE_CDN": cdn_url + "pyodide/v0.27.7/full/",
           "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    site_server, site_url = _serve(site)
    yield site_url, full
    site_server.shutdown()
    cdn_server.shutdown()


def _page(browser, url):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "neural-networks/")
    return context, page, errors


def test_cdn_mode_loads_verified_pyodide(browser, cdn_site):
    url, _ = cdn_site
    context, page, errors = _page(browser, url)
    assert page.evaluate("() => window.CHAPTER2_CONFIG.mode") == "cdn"
    assert page.evaluate("() => window.chapter2.run('import chapter2, numpy; [chapter2.__version__, numpy.__version__]')") == ["0.1.0", "2.0.2"]
    assert not errors
    context.close()


def test_cdn_mode_refuses_a_tampered_file(browser, cdn_site):
    url, full = cdn_site
    original = (full / "pyodide.asm.js").read_bytes()
    try:
        (full / "pyodide.asm.js").write_bytes(original + b"\n// tampered\n")
        context, page, _ = _page(browser, url)
        message = page.evaluate("() => window.chapter2.ready.then(() => 'loaded', e => e.message)")
        assert "integrity check failed" in message and "pyodide.asm.js" in message
        context.close()
    finally:
        (full / "pyodide.asm.js").write_bytes(original)
