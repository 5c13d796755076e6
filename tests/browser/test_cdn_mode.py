"""CDN mode, against a stand-in CDN on 127.0.0.1 (the real one is not reachable in tests).

The site built with CHAPTER2_PYODIDE=cdn loads Pyodide from the CDN URL, checks
every core file against the hash pinned at build time, refuses a tampered one,
and runs exactly the bytes it checked: each file is fetched once (a CDN that
answers a second request with other bytes changes nothing).
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
from typing import NamedTuple

import pytest

from conftest import ROOT, _Handler

pytestmark = pytest.mark.browser


class _CdnHandler(_Handler):
    """A CDN answers cross-origin requests (jsDelivr sends Access-Control-Allow-Origin: *).

    Every request is counted by file name (`hits`); with `two_faced` set, only the first request for a
    file gets the real one, every later one gets other bytes (and nothing may be cached)."""

    hits: dict[str, int] = {}
    two_faced = False

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        if _CdnHandler.two_faced:
            self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self):
        name = self.path.split("?")[0].rsplit("/", 1)[-1]
        _CdnHandler.hits[name] = _CdnHandler.hits.get(name, 0) + 1
        if _CdnHandler.two_faced and _CdnHandler.hits[name] > 1:
            body = b"/* other bytes on a second request */ throw new Error('unverified bytes ran');"
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def _serve(directory: Path, handler=_Handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class CdnSite(NamedTuple):
    url: str  # the site, served on 127.0.0.1
    full: Path  # the stand-in CDN's folder of Pyodide files
    site: Path  # the built site
    cdn: str  # the CDN base URL the site was built with (CHAPTER2_PYODIDE_CDN)


@pytest.fixture(scope="module")
def cdn_site(tmp_path_factory):
    """The one CDN-mode build of a test run (a whole site build: 22 s of CPU), served beside a stand-in CDN."""
    cdn_root = tmp_path_factory.mktemp("cdn")
    full = cdn_root / "pyodide" / "v0.27.7" / "full"
    shutil.copytree(ROOT / "node_modules" / "pyodide", full)
    wheel = next((ROOT / "vendor" / "pyodide").glob("numpy-*.whl"))  # the official wheel, as on the CDN
    shutil.copy(wheel, full / wheel.name)
    cdn_server, cdn_url = _serve(cdn_root, _CdnHandler)
    site = tmp_path_factory.mktemp("cdn-site")
    cdn = cdn_url + "pyodide/v0.27.7/full/"
    env = {**os.environ, "CHAPTER2_PYODIDE": "cdn", "CHAPTER2_PYODIDE_CDN": cdn,
           "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    site_server, site_url = _serve(site)
    yield CdnSite(site_url, full, site, cdn)
    site_server.shutdown()
    cdn_server.shutdown()


def _page(browser, url):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "neural-networks/")
    return context, page, errors


def test_the_cdn_build_ships_no_pyodide_core_and_names_the_cdn(cdn_site):
    config_js = (cdn_site.site / "assets" / "chapter2" / "config.js").read_text()
    assert '"mode": "cdn"' in config_js and cdn_site.cdn in config_js
    assert not (cdn_site.site / "pyodide" / "pyodide.asm.wasm").exists()
    assert list((cdn_site.site / "pyodide").glob("chapter2-*.whl"))


def test_cdn_mode_loads_verified_pyodide(browser, cdn_site):
    url = cdn_site.url
    context, page, errors = _page(browser, url)
    assert page.evaluate("() => window.chapter2.load().then(() => window.CHAPTER2_CONFIG.mode)") == "cdn"
    assert page.evaluate("() => window.chapter2.run('import chapter2, numpy; [chapter2.__version__, numpy.__version__]')") == ["0.1.0", "2.0.2"]
    assert not errors
    context.close()


def test_cdn_mode_refuses_a_tampered_file(browser, cdn_site):
    url, full = cdn_site.url, cdn_site.full
    original = (full / "pyodide.asm.js").read_bytes()
    try:
        (full / "pyodide.asm.js").write_bytes(original + b"\n// tampered\n")
        context, page, _ = _page(browser, url)
        message = page.evaluate("() => window.chapter2.ready.then(() => 'loaded', e => e.message)")
        assert "integrity check failed" in message and "pyodide.asm.js" in message
        context.close()
    finally:
        (full / "pyodide.asm.js").write_bytes(original)


def test_cdn_mode_runs_the_bytes_it_verified_and_fetches_each_file_once(browser, cdn_site):
    url = cdn_site.url
    _CdnHandler.hits.clear()
    _CdnHandler.two_faced = True
    try:
        context, page, errors = _page(browser, url)
        assert page.evaluate("() => window.chapter2.run('import numpy; int(numpy.arange(5).sum())')") == 10
        assert not errors, errors
        core = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl")
        # one worker started (run()): it fetched every file once, with its hash, and ran those bytes; any
        # second request would have got other bytes (the old runtime made one, for pyodide.asm.js)
        assert {name: _CdnHandler.hits.get(name, 0) for name in core} == {name: 1 for name in core}, _CdnHandler.hits
        context.close()
    finally:
        _CdnHandler.two_faced = False
