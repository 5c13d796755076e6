"""The site built with the Hub turned off (CHAPTER2_HUB=off; extra.hub: false in mkdocs.yml does the same): no
model id field and no Look up button on any page, and no Hub host in any page's Content-Security-Policy, so the
page cannot reach huggingface.co even if asked; the calculators compute as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from chapter2 import calculators
from conftest import ROOT, local_only_context

from _calculators import open_workbenches
from test_cdn_mode import _serve

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def offline_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("hub-off-site")
    env = {**os.environ, "CHAPTER2_HUB": "off", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    server, url = _serve(site)
    yield site, url
    server.shutdown()


def test_no_page_has_the_id_field_or_a_hub_host(offline_site, site_dir):
    site, _ = offline_site
    pages = sorted(site.rglob("*.html"))
    assert pages
    for html in pages:
        text = html.read_text()
        assert 'name="model_id"' not in text and "data-hub-lookup" not in text, html
        policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text)
        if policy:
            assert "huggingface.co" not in policy.group(1) and "hf.co" not in policy.group(1), html
    # the default build has both, on the same page
    default = (site_dir / "llm-architecture" / "index.html").read_text()
    assert 'name="model_id"' in default and "https://huggingface.co" in default


def test_an_offline_site_cannot_reach_the_hub_and_still_computes(offline_site, browser):
    _, url = offline_site
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "llm-architecture/")
        open_workbenches(page)
        refused = page.evaluate("""async () => {
            const seen = [];
            document.addEventListener('securitypolicyviolation', (e) => seen.push(new URL(e.blockedURI).host));
            try { await fetch('https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json'); } catch (err) {}
            await new Promise((done) => { const check = () => (seen.length ? done() : requestAnimationFrame(check)); check(); });
            return seen; }""")
        assert refused == ["huggingface.co"]
        calc = page.locator('[data-calculator="model_config"]')
        before = int(calc.get_attribute("data-computed") or 0)
        calc.locator('[name="context"]').fill("4096")
        page.wait_for_function("([b]) => (+document.querySelector('[data-calculator=model_config]').dataset.computed || 0) > b"
                               " && !document.querySelector('[data-calculator=model_config]').hasAttribute('aria-busy')",
                               arg=[before], timeout=180_000)
        shown = calc.locator('[data-output="layers"]').inner_text()
        assert shown == calculators.compute("model_config", {"context": "4096"})["layers"]
        assert not context.blocked, context.blocked
        assert not errors, errors
