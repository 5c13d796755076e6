"""A Hugging Face model id typed into the config reader, the Hub answered by recorded files (tests/fixtures/hub,
PROVENANCE.md) through Playwright routes on huggingface.co. Every other request that is not to 127.0.0.1 is
aborted and listed. (The real Hub redirects a large file's resolve URL to a storage host, cas-bridge.xethub.hf.co,
which the page's policy allows; here the routes answer the byte ranges at huggingface.co itself: a Playwright
route sees only the first URL of a redirect chain, and the redirected request would go to the network.
tests/browser/test_hub_redirect_in_browser.py follows a real redirect, from a local HTTPS server.)

What is checked: nothing is fetched while a reader types, only on Look up or Enter; the config reader shows the
numbers of the same config.json pasted; the stored bytes come from two range requests on the real header
(bytes=0-7, then bytes=8-11415) and equal the sum measured on the whole published file;
each error answer shows its message under the field and the calculator keeps computing; the page's policy lets
the lookup reach the Hub's hosts and no other.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapter2 import calculators
from conftest import LOCAL, local_only_context

from _calculators import open_workbenches

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hub"
MINILM, MINILM_REV = "sentence-transformers/all-MiniLM-L6-v2", "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
GRANITE, GRANITE_REV = "ibm-granite/granite-3.1-1b-a400m-instruct", "8290d32ffc403c6d628249af989beb7800c70d77"
MINILM_DIR = FIXTURES / "sentence-transformers--all-MiniLM-L6-v2"
GRANITE_DIR = FIXTURES / "ibm-granite--granite-3.1-1b-a400m-instruct"
MINILM_STORED = 90_868_376 - 8 - 11_408  # measured on the whole published file (PROVENANCE.md)
HUB, BRIDGE = "https://huggingface.co/", "https://cas-bridge.xethub.hf.co/"  # the Hub, its storage host
CORS = {"access-control-allow-origin": "*",
        "access-control-expose-headers": "X-Error-Code,X-Error-Message,Content-Range,Accept-Ranges,Content-Length"}
WAIT_MS = 180_000


class FakeHub:
    """Answers the Hub's URLs from the recorded files: for each repository, {path: bytes} (a file the Hub serves
    from storage is redirected to the bridge host, which answers byte ranges), or an error answer."""

    def __init__(self):
        self.files: dict[str, dict[str, bytes]] = {}
        self.errors: dict[str, tuple[int, str]] = {}  # repository (or repository@revision) -> (status, X-Error-Code)
        self.offline: set[str] = set()  # repositories whose requests fail as on a broken network
        self.revisions: dict[str, set[str]] = {}
        self.seen: list[tuple[str, str | None]] = []  # (url, Range header)

    def handle(self, route):
        request = route.request
        url = request.url
        self.seen.append((url, request.headers.get("range")))
        org, name, _resolve, rev, path = url[len(HUB):].split("/", 4)
        repo = f"{org}/{name}"
        if repo in self.offline:
            route.abort("internetdisconnected")
            return
        error = self.errors.get(f"{repo}@{rev}") or self.errors.get(repo)
        if error is None and rev not in self.revisions.get(repo, {"main"}):
            error = (404, "RevisionNotFound")
        if error is not None:
            status, code = error
            route.fulfill(status=status, body=b"", headers={**CORS, **({"x-error-code": code} if code else {})})
            return
        if path not in self.files.get(repo, {}):
            route.fulfill(status=404, body=b"Entry not found", headers={**CORS, "x-error-code": "EntryNotFound"})
        elif path.endswith(".safetensors"):  # a byte range of a stored file
            data = self.files[repo][path]
            if data is None:  # a stored file whose bytes were not recorded: no answer for it
                route.abort("internetdisconnected")
                return
            first, last = map(int, request.headers["range"].removeprefix("bytes=").split("-"))
            body = data[first:last + 1]
            route.fulfill(status=206, body=body, headers={**CORS, "content-type": "application/octet-stream",
                                                          "content-range": f"bytes {first}-{first + len(body) - 1}/*"})
        else:
            route.fulfill(status=200, body=self.files[repo][path], headers={**CORS, "content-type": "application/json"})

    def hosts(self) -> set[str]:
        return {url.split("/")[2] for url, _ in self.seen}


def _elsewhere(context) -> list[str]:
    """Requests that left 127.0.0.1 for another host than the Hub's two (local_only_context lists every request
    that left, the ones the fake Hub answered too)."""
    return [u for u in context.blocked if not u.startswith((HUB, BRIDGE))]


@pytest.fixture
def hub_page(browser, site_url):
    fake = FakeHub()
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        # the route added last is tried first: the Hub is answered, the rest as local_only_context does
        context.route("https://huggingface.co/**", fake.handle)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(site_url + "llm-architecture/")
        open_workbenches(page)
        yield page, fake, context, errors


def _calc(page):
    return page.locator('[data-calculator="model_config"]')


def _outputs(calc) -> dict[str, str]:
    return {el.get_attribute("data-output"): el.inner_text() for el in calc.locator("[data-output]").all()
            if not el.get_attribute("data-kind")}


def _look_up(page, text: str, *, enter: bool = True) -> str:
    """Type `text` into the id field, look it up, wait for the lookup's status line to settle; its state."""
    calc = _calc(page)
    field = calc.locator('[name="model_id"]')
    field.fill(text)
    status = calc.locator("[data-hub-status]").first  # A's id (B's, of the compare toggle, follows it)
    # hub.js comes with the runtime's core, which typing starts loading; an Enter pressed before it binds is lost
    page.wait_for_function("() => document.querySelector('[data-calculator=model_config] [data-hub-lookup]')"
                           ".dataset.bound === 'true'", timeout=WAIT_MS)
    page.evaluate("() => { const s = document.querySelector('[data-calculator=model_config] [data-hub-status]');"
                  " s.dataset.state = ''; }")
    if enter:
        field.press("Enter")
    else:
        calc.locator("[data-hub-lookup]").first.click()
    page.wait_for_function("() => ['done', 'error'].includes(document.querySelector("
                           "'[data-calculator=model_config] [data-hub-status]').dataset.state)", timeout=WAIT_MS)
    return status.get_attribute("data-state")


def _wait_result(page, before: int, *, message: bool = False):
    page.wait_for_function(
        "([b, m]) => { const el = document.querySelector('[data-calculator=model_config]');"
        " return !el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b"
        " || (m && !el.querySelector('[data-calc-message]').hidden)); }", arg=[before, message], timeout=WAIT_MS)


def _computed(page) -> int:
    return int(_calc(page).get_attribute("data-computed") or 0)


def test_a_looked_up_id_shows_its_config_s_numbers_and_its_stored_bytes(hub_page):
    page, fake, context, errors = hub_page
    granite_config = (GRANITE_DIR / "config.json").read_bytes()
    # Granite's checkpoint is stored on the Hub, but its header is not recorded (PROVENANCE.md): the storage host
    # does not answer for it, and the stored bytes say so
    fake.files[GRANITE] = {"config.json": granite_config, "model.safetensors": None}
    fake.revisions[GRANITE] = {GRANITE_REV}
    fake.files[MINILM] = {"config.json": (MINILM_DIR / "config.json").read_bytes(),
                          "model.safetensors": (MINILM_DIR / "model.safetensors.header").read_bytes()}
    fake.revisions[MINILM] = {"main", MINILM_REV}
    calc = _calc(page)

    # typing fetches nothing and recomputes nothing; another input recomputes without the id (not looked up)
    calc.locator('[name="model_id"]').fill(f"{GRANITE}@{GRANITE_REV}")
    before = _computed(page)
    calc.locator('[name="context"]').fill("65536")
    _wait_result(page, before)
    assert _outputs(calc)["model_info"] == calculators.compute("model_config", {"context": "65536"})["model_info"]
    assert not fake.seen, "nothing may be fetched before the reader asks"

    # Granite, at its pinned revision: the numbers of its config.json pasted
    before = _computed(page)
    assert _look_up(page, f"{GRANITE}@{GRANITE_REV}") == "done"
    _wait_result(page, before)
    shown = _outputs(calc)
    pasted = calculators.compute("model_config", {"config_json": granite_config.decode(), "context": "65536"})
    for key, value in pasted.items():
        if isinstance(value, str) and key != "stored":
            assert shown[key] == value.replace("pasted config.json", f"{GRANITE}@{GRANITE_REV}"), key
    assert shown["model_info"].startswith(f"{GRANITE}@{GRANITE_REV}: GraniteMoE")
    requested = [(u, r) for u, r in fake.seen]
    assert (f"{HUB}{GRANITE}/resolve/{GRANITE_REV}/config.json", None) in requested
    assert shown["stored"].startswith(f"not read: no answer for model.safetensors of {GRANITE}@{GRANITE_REV}")

    # MiniLM: its real header, read with two range requests; its BertModel config is
    # refused, and the message still gives the stored bytes, the sum over the header's tensors
    fake.seen.clear()
    before = _computed(page)
    assert _look_up(page, MINILM, enter=False) == "done"
    _wait_result(page, before, message=True)
    message = calc.locator("[data-calc-message]").inner_text()
    assert "'BertModel'" in message and "not supported" in message
    assert f"its checkpoint, read from the Hub: {MINILM_STORED:,} bytes (90.9 MB) in 104 tensors of 1 file" in message
    ranges = [r for u, r in fake.seen if u.endswith("/model.safetensors")]
    assert ranges == ["bytes=0-7", "bytes=8-11415"], fake.seen
    assert fake.hosts() == {"huggingface.co"}
    status = calc.locator("[data-hub-status]").first.inner_text()
    assert "config.json and 1 safetensors header" in status

    # an empty id goes back to the select, and nothing is fetched for it
    fake.seen.clear()
    before = _computed(page)
    _look_up_empty = calc.locator('[name="model_id"]')
    _look_up_empty.fill("")
    _look_up_empty.press("Enter")
    _wait_result(page, before)
    assert _outputs(calc)["model_info"] == calculators.compute("model_config", {"context": "65536"})["model_info"]
    assert not fake.seen
    assert not _elsewhere(context), _elsewhere(context)
    assert not errors, errors


ERRORS = [
    ("nobody/no-such-model", "is not a model on the Hub (unknown id"),
    ("meta-llama/Llama-3.1-8B", "is gated on the Hub: paste its config.json"),
    ("google/gemma-3-27b-it", "is gated on the Hub: paste its config.json"),
    ("Qwen/Qwen3-8B", "could not reach the Hub for Qwen/Qwen3-8B (no network?)"),
    (f"{GRANITE}@no-such-branch", f"{GRANITE} has no revision 'no-such-branch' on the Hub"),
    ("not an id", "model id must be org/name"),
]


def test_each_error_shows_its_message_and_the_calculator_keeps_working(hub_page):
    page, fake, context, errors = hub_page
    fake.errors["nobody/no-such-model"] = (404, "RepoNotFound")
    fake.errors["meta-llama/Llama-3.1-8B"] = (401, "GatedRepo")
    fake.errors["google/gemma-3-27b-it"] = (403, "")
    fake.offline.add("Qwen/Qwen3-8B")
    fake.files[GRANITE] = {"config.json": (GRANITE_DIR / "config.json").read_bytes(),
                           # a real file that is not safetensors (the Git LFS pointer, PROVENANCE.md), served as a
                           # repository holding a pointer committed as a plain file would serve it
                           "model.safetensors": (GRANITE_DIR / "model.safetensors.lfs-pointer").read_bytes()}
    calc = _calc(page)
    for text, words in ERRORS:
        assert _look_up(page, text) == "error", text
        shown = calc.locator("[data-hub-status]").first.inner_text()
        assert words in shown, (text, shown)
        assert calc.locator('[name="model_id"]').get_attribute("aria-invalid") == "true"
        # the calculator still computes: another input gives CPython's numbers for the select's model
        before = _computed(page)
        context_tokens = str(1000 + len(text))
        calc.locator('[name="context"]').fill(context_tokens)
        _wait_result(page, before)
        assert _outputs(calc)["layers"] == calculators.compute("model_config", {"context": context_tokens})["layers"]
    # a header that is not safetensors: the config's numbers, and the stored bytes say why they are missing
    before = _computed(page)
    assert _look_up(page, GRANITE) == "done"
    _wait_result(page, before)
    stored = _outputs(calc)["stored"]
    assert stored.startswith("not read: model.safetensors is not a safetensors file: its first 8 bytes give a header of "
                             "2,336,927,755,350,992,246 bytes"), stored
    assert not _elsewhere(context), _elsewhere(context)
    assert not errors, errors


def test_the_page_policy_lets_a_lookup_reach_the_hub_s_hosts_and_no_other(hub_page):
    page, fake, context, errors = hub_page
    meta = page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    connect = next(d for d in meta.split(";") if d.strip().startswith("connect-src")).split()[1:]
    assert connect[0] == "'self'" and "https://huggingface.co" in connect and "https://cas-bridge.xethub.hf.co" in connect
    blocked = page.evaluate("""async () => {
        const seen = [];
        document.addEventListener('securitypolicyviolation', (e) => seen.push(new URL(e.blockedURI).host));
        for (const url of ['https://example.com/x.json', 'https://huggingface.co.evil.test/x']) {
          try { await fetch(url); } catch (err) {}
        }
        await new Promise((done) => { const check = () => (seen.length >= 2 ? done() : requestAnimationFrame(check)); check(); });
        return seen.sort(); }""")
    assert blocked == ["example.com", "huggingface.co.evil.test"]
    assert not fake.seen and not [u for u in context.requests if not u.startswith(LOCAL)]
    assert not errors, errors


def test_the_worker_s_record_is_what_cpython_reads(hub_page):
    """The record the page keeps (made by chapter2.hub in Pyodide) is the one CPython makes from the same bytes."""
    from chapter2 import hub

    page, fake, context, errors = hub_page
    fake.files[MINILM] = {"config.json": (MINILM_DIR / "config.json").read_bytes(),
                          "model.safetensors": (MINILM_DIR / "model.safetensors.header").read_bytes()}
    page.evaluate("() => window.chapter2.load()")
    record = page.evaluate("""async () => {
        const replies = {};
        for (;;) {
          const step = await window.chapter2.hubStep('sentence-transformers/all-MiniLM-L6-v2', 'llm', replies);
          if (!step.fetch) return step;
          for (const r of step.fetch) {
            const res = await fetch(r.url, { headers: r.range ? { Range: r.range } : {} });
            const bytes = new Uint8Array(await res.arrayBuffer());
            let s = ''; for (const b of bytes) s += String.fromCharCode(b);
            replies[r.key] = { status: res.status, body: res.ok ? btoa(s) : '', error_code: res.headers.get('X-Error-Code') || '' };
          }
        } }""")
    header = (MINILM_DIR / "model.safetensors.header").read_bytes()
    mid = hub.parse_model_id(MINILM)
    replies = {"config.json": hub.Reply(200, (MINILM_DIR / "config.json").read_bytes()),
               "model.safetensors.index.json": hub.Reply(404, error_code="EntryNotFound"),
               "model.safetensors#0-7": hub.Reply(206, header[:8]), "model.safetensors#8-11415": hub.Reply(206, header[8:])}
    assert record["record"] == json.loads(json.dumps(hub.plan(mid, "llm", replies).to_json()))
    assert not errors, errors


def test_an_enter_pressed_while_the_runtime_loads_looks_the_id_up(browser, site_url):
    """A reader types an id and presses Enter at once, before hub.js (part of the runtime's core, which typing
    starts loading) has bound the field: the press is held and played as a press of Look up once the runtime
    takes over, so the id is looked up (it used to be dropped: the runtime replayed clicks, not keys). hub.js
    is kept back until the Enter is in."""
    fake, held = FakeHub(), []
    fake.files[MINILM] = {"config.json": (MINILM_DIR / "config.json").read_bytes()}
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        context.route("https://huggingface.co/**", fake.handle)
        context.route("**/assets/chapter2/hub.js", lambda route: held.append(route))  # answered after the Enter
        page = context.new_page()
        # (not until "load": a held script the runtime injects before the page's load event holds that event)
        page.goto(site_url + "llm-architecture/", wait_until="domcontentloaded")
        open_workbenches(page)
        field = _calc(page).locator('[name="model_id"]')
        field.fill(MINILM)
        field.press("Enter")
        page.wait_for_function("() => !!window.chapter2Charts", timeout=WAIT_MS)  # the core is loading
        assert held, "hub.js was not requested"
        assert not fake.seen, "looked up before hub.js ran"
        held.pop().continue_()
        page.wait_for_function("() => ['done', 'error'].includes(document.querySelector("
                               "'[data-calculator=model_config] [data-hub-status]').dataset.state)", timeout=WAIT_MS)
        assert any(url.endswith("/config.json") for url, _ in fake.seen)
        assert page.url.startswith(site_url), "the Enter submitted the form"
        assert not _elsewhere(context)
