"""The page's lookup follows the Hub's storage redirect, as on the real Hub: the checkpoint's resolve URL on
huggingface.co answers 302 to a signed URL on cas-bridge.xethub.hf.co, and the browser's fetch follows it with
its Range header (the page's policy must let the redirect through: connect-src names both hosts).

Playwright's routes cannot answer this: a route sees only the first URL of a redirect chain, and the redirected
request goes to the network. So the Hub here is a real HTTPS server on 127.0.0.1 (tests/_local_hub.py, serving
the recorded real files of sentence-transformers/all-MiniLM-L6-v2, PROVENANCE.md), and this test's Chromium maps
the Hub's two host names to it (--host-resolver-rules; every other name still resolves to nothing, as for
the other browser tests). Nothing leaves 127.0.0.1: every request the page makes is listed and checked.
"""

from __future__ import annotations

import hashlib

import pytest

from _calculators import open_workbenches
from _local_hub import STORAGE_PATH, LocalHub
from conftest import CHROMIUM_ARGS, HEADLESS_SHELL, LOCAL
from test_hub_pipeline_in_browser import _bound
from test_hub_redirect import MINILM, MINILM_DIR, MINILM_REV, MINILM_STORED

pytestmark = pytest.mark.browser
WAIT_MS = 180_000
HUB_HOST, STORAGE_HOST = "huggingface.co", "cas-bridge.xethub.hf.co"
STATUS = "#c2-model_config-model_id-status"  # A's id (B's, of the compare toggle, has its own)


@pytest.fixture
def hub_and_page(browser, site_url, tmp_path):
    header = (MINILM_DIR / "model.safetensors.header").read_bytes()  # the file's first 8 + N bytes stand for it
    hub = LocalHub({(MINILM, MINILM_REV): {"config.json": (MINILM_DIR / "config.json").read_bytes(),
                                           "model.safetensors": header}}, storage=f"https://{STORAGE_HOST}")
    port = hub.start(tls_dir=tmp_path)
    rules = f"MAP {HUB_HOST} 127.0.0.1:{port}, MAP {STORAGE_HOST} 127.0.0.1:{port}, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    args = [a for a in CHROMIUM_ARGS if not a.startswith("--host-resolver-rules=")] + [f"--host-resolver-rules={rules}"]
    own = browser.browser_type.launch(executable_path=HEADLESS_SHELL, args=args, headless=True)  # the session's Playwright
    context = own.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
    requests, blocked = [], []
    hub_origins = (f"https://{HUB_HOST}/", f"https://{STORAGE_HOST}/")

    def route(r):  # a route sees the first URL of a redirect chain only; the mapping covers the rest
        if r.request.url.startswith(LOCAL + hub_origins):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    context.on("request", lambda req: requests.append(req.url))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(site_url + "llm-architecture/")
        open_workbenches(page)
        yield page, hub, port, requests, blocked, errors
    finally:
        context.close()
        own.close()
        hub.stop()


def test_a_lookup_follows_the_redirect_to_the_storage_host(hub_and_page):
    page, hub, port, requests, blocked, errors = hub_and_page
    calc = page.locator('[data-calculator="model_config"]')
    calc.locator('[name="model_id"]').fill(MINILM)
    _bound(page, STATUS)  # hub.js, with the runtime's core that typing starts loading: Enter before it is lost
    calc.locator('[name="model_id"]').press("Enter")
    page.wait_for_function("s => ['done', 'error'].includes(document.querySelector(s).dataset.state)", arg=STATUS,
                           timeout=WAIT_MS)
    assert page.locator(STATUS).get_attribute("data-state") == "done", page.locator(STATUS).inner_text()
    assert "config.json and 1 safetensors header" in page.locator(STATUS).inner_text()
    # MiniLM's BertModel config is refused by the config reader; its message gives the stored bytes, read from
    # the header that came through the redirect: the sum measured on the whole published file
    page.wait_for_function("() => !document.querySelector('[data-calculator=model_config] [data-calc-message]').hidden",
                           timeout=WAIT_MS)
    message = calc.locator("[data-calc-message]").inner_text()
    assert f"its checkpoint, read from the Hub: {MINILM_STORED:,} bytes (90.9 MB) in 104 tensors of 1 file" in message

    sha = hashlib.sha256((MINILM_DIR / "model.safetensors.header").read_bytes()).hexdigest()
    checkpoint = [(s.host, s.path.split("?")[0], s.range, s.status) for s in hub.seen
                  if s.path.endswith("/model.safetensors") or s.path.startswith(STORAGE_PATH)]
    resolve = f"/{MINILM}/resolve/main/model.safetensors"
    assert checkpoint == [(HUB_HOST, resolve, "bytes=0-7", 302), (STORAGE_HOST, f"{STORAGE_PATH}{sha}", "bytes=0-7", 206),
                          (HUB_HOST, resolve, "bytes=8-11415", 302),
                          (STORAGE_HOST, f"{STORAGE_PATH}{sha}", "bytes=8-11415", 206)], hub.seen
    # a cross-origin redirect: the storage host sees the page's fetch with an opaque origin, and answers it
    assert {s.origin for s in hub.seen if s.path.startswith(STORAGE_PATH)} == {"null"}
    away = [u for u in requests if not u.startswith(LOCAL + (f"https://{HUB_HOST}/", f"https://{STORAGE_HOST}/"))]
    assert not away and not blocked, (away, blocked)
    assert any(u.startswith(f"https://{STORAGE_HOST}{STORAGE_PATH}") for u in requests)  # the page followed it
    assert not errors, errors
