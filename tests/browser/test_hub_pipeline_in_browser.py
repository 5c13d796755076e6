"""A diffusers pipeline's Hub id typed into 2.3's "any denoiser" calculator (denoiser_any) on the built site, the
Hub answered by the recorded real files of stabilityai/stable-diffusion-xl-base-1.0 (tests/fixtures/hub,
PROVENANCE.md) through Playwright routes on huggingface.co, as tests/browser/test_hub_in_browser.py answers the
config reader's. Every other request that is not to 127.0.0.1 is aborted and listed.

What is checked: nothing is fetched while a reader types; Look up fetches model_index.json, then the config.json
of each component that has one (five requests), and the calculator shows what CPython computes from that record,
which is what the unet's config.json pasted gives; the id travels in the page's address (a fresh page at that
address looks it up again and shows the same) and in the JSON export; each bad id shows its message under the
field, and the calculator keeps computing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _calculators import calculator_pages, open_workbenches
from chapter2 import calculators
from chapter2.calculators import _hub
from conftest import local_only_context
from test_hub_in_browser import MINILM, MINILM_DIR, FakeHub, _elsewhere
from test_permalinks import _address_carries
from test_hub_pipeline import SDXL, SDXL_DIR, SDXL_REV, SDXL_UNET_PARAMS, _lookup
from test_share_in_browser import _download, rounded

pytestmark = pytest.mark.browser
WAIT_MS = 180_000
NAME = "denoiser_any"
STATUS = f"[data-calculator={NAME}] .c2-calc__field:has([name=model_id]) [data-hub-status]"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def pipeline_page(browser, site_url, site_dir):
    path = calculator_pages(site_dir, {NAME})[NAME]
    fake = FakeHub()
    fake.files[SDXL] = _files(SDXL_DIR)
    fake.revisions[SDXL] = {"main", SDXL_REV}
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        context.route("https://huggingface.co/**", fake.handle)  # tried before local_only_context's route
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(site_url + path)
        open_workbenches(page)
        yield page, fake, context, errors


def _calc(page):
    return page.locator(f'[data-calculator="{NAME}"]')


def _texts(page) -> dict[str, str]:
    return _calc(page).evaluate("el => Object.fromEntries([...el.querySelectorAll('[data-output]')]"
                                ".filter(dd => !dd.dataset.kind).map(dd => [dd.dataset.output, dd.textContent]))")


def _computed(page) -> int:
    return int(_calc(page).get_attribute("data-computed") or 0)


def _settled(page, before: int, *, message: bool = False) -> None:
    page.wait_for_function(
        "([n, b, m]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b"
        " || (m && !el.querySelector('[data-calc-message]').hidden)); }", arg=[NAME, before, message], timeout=WAIT_MS)


def _bound(page, status: str) -> None:
    """Wait until hub.js has bound the id field of `status` (it comes with the runtime's core, which typing into a
    calculator starts loading): an Enter pressed before that is not held for later, as a button press is."""
    page.wait_for_function("s => document.querySelector(s).closest('.c2-calc__field')"
                           ".querySelector('[data-hub-lookup]').dataset.bound === 'true'", arg=status, timeout=WAIT_MS)


def _look_up(page, text: str) -> str:
    """Type `text` into A's id field, press Enter, wait for the lookup to settle; its state."""
    field = _calc(page).locator('[name="model_id"]')
    field.fill(text)
    _bound(page, STATUS)
    page.evaluate("s => { document.querySelector(s).dataset.state = ''; }", STATUS)
    field.press("Enter")
    page.wait_for_function("s => ['done', 'error'].includes(document.querySelector(s).dataset.state)", arg=STATUS,
                           timeout=WAIT_MS)
    return page.locator(STATUS).get_attribute("data-state")


def _status_over_hint(page) -> float:
    """How many pixels of height the lookup's line and the field's hint share (0: one is above the other)."""
    return page.evaluate("s => { const st = document.querySelector(s);"
                         " const hint = st.closest('.c2-calc__field').querySelector('.c2-calc__hint');"
                         " const a = st.getBoundingClientRect(), b = hint.getBoundingClientRect();"
                         " return a.height > 0 ? Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)) : -1; }",
                         STATUS)


CONTRAST = """(s, prop = 'color') => { const st = document.querySelector(s);
  const rgba = (c) => { const v = c.match(/[\\d.]+/g).map(Number); return v.length > 3 ? v : [...v, 1]; };
  let bg = [255, 255, 255, 1];
  for (let el = prop === 'color' ? st : st.parentElement; el; el = el.parentElement) {
    const c = rgba(getComputedStyle(el).backgroundColor);
    if (c[3] > 0) { bg = c; break; }
  }
  const fg = rgba(getComputedStyle(st)[prop]);
  const seen = [0, 1, 2].map((i) => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
  const lum = (c) => c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + [0.2126, 0.7152, 0.0722][i] * v, 0);
  const [a, b] = [lum(seen), lum(bg.slice(0, 3))];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }"""


def _cpython(raw: dict) -> dict:
    """What CPython computes for `raw`, the SDXL record remembered as the page sends it."""
    _hub.remember(json.dumps({r.model_id.text: r.to_json() for r in (_lookup(SDXL, SDXL_DIR),
                                                                     _lookup(f"{SDXL}@{SDXL_REV}", SDXL_DIR))}))
    return calculators.evaluate(NAME, raw)


def _text_outputs(result: dict) -> dict[str, str]:
    return {o.key: result["outputs"][o.key] for o in calculators.get(NAME).outputs if o.kind in ("text", "caption")}


def test_a_pipeline_id_gives_the_numbers_of_its_denoiser_config_and_travels(pipeline_page):
    page, fake, context, errors = pipeline_page
    calc = _calc(page)
    typed = f"{SDXL}@{SDXL_REV}"

    # typing fetches nothing; another input recomputes without the id (not looked up yet)
    calc.locator('[name="model_id"]').fill(typed)
    before = _computed(page)
    calc.locator('[name="width"]').fill("768")
    _settled(page, before)
    assert _texts(page) == _text_outputs(_cpython({"width": "768"}))
    assert not fake.seen, "nothing may be fetched before the reader asks"

    before = _computed(page)
    assert _look_up(page, typed) == "done"
    _settled(page, before)
    assert [url for url, _ in fake.seen] == [f"https://huggingface.co/{SDXL}/resolve/{SDXL_REV}/{p}" for p in (
        "model_index.json", "text_encoder/config.json", "text_encoder_2/config.json", "unet/config.json",
        "vae/config.json")]
    assert page.locator(STATUS).inner_text() == (
        f"Fetched {typed} from the Hub (5 requests): model_index.json and the config.json of text_encoder, "
        "text_encoder_2, unet, vae.")
    want = _cpython({"width": "768", "model_id": typed})
    shown = _texts(page)
    assert shown == _text_outputs(want)
    pasted = _text_outputs(_cpython({"width": "768", "config_json": (SDXL_DIR / "unet" / "config.json").read_text()}))
    assert {**shown, "model": shown["model"].removeprefix(f"{typed}, unet/config.json: ")} == pasted
    assert want["numbers"]["denoiser_parameters"] == SDXL_UNET_PARAMS

    # the export carries the id and CPython's numbers
    data = json.loads(_download(page, calc, "json"))
    columns = {f.name: f.column for f in calculators.get(NAME).fields}
    assert data["inputs"][columns["model_id"]] == typed
    assert rounded(data["numbers"]) == rounded(json.loads(json.dumps(want["numbers"])))

    # the address carries it; a fresh page at that address looks it up again and shows the same
    _address_carries(page, {NAME: ["model_id", "width"]})
    fake.seen.clear()
    fresh = context.new_page()
    fresh.on("pageerror", lambda e: errors.append(str(e)))
    fresh.goto(page.url)
    open_workbenches(fresh)
    fresh.wait_for_function("s => document.querySelector(s).dataset.state === 'done'", arg=STATUS, timeout=WAIT_MS)
    fresh.wait_for_function("([n, m]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
                            " return !el.hasAttribute('aria-busy') && el.querySelector('[data-output=model]')"
                            ".textContent.startsWith(m); }", arg=[NAME, f"{typed}, unet/config.json: "], timeout=WAIT_MS)
    assert _calc(fresh).locator('[name="model_id"]').input_value() == typed
    assert _texts(fresh) == shown
    assert len(fake.seen) == 5
    assert not _elsewhere(context), _elsewhere(context)
    assert not errors, errors


ERRORS = [
    (MINILM, f"{MINILM} has no model_index.json: it is not a diffusers pipeline"),
    ("black-forest-labs/FLUX.1-dev", "is gated on the Hub: paste its config.json"),
    ("nobody/no-such-pipeline", "is not a model on the Hub (unknown id"),
    (f"{SDXL}@no-such-branch", f"{SDXL} has no revision 'no-such-branch' on the Hub"),
    ("stable-diffusion-xl", "model id must be org/name"),
]


def test_each_bad_id_shows_its_message_and_the_calculator_keeps_working(pipeline_page):
    page, fake, context, errors = pipeline_page
    fake.files[MINILM] = _files(MINILM_DIR)  # a real repository with no model_index.json (an LLM's files)
    fake.errors["black-forest-labs/FLUX.1-dev"] = (401, "GatedRepo")
    fake.errors["nobody/no-such-pipeline"] = (401, "RepoNotFound")
    calc = _calc(page)
    for text, words in ERRORS:
        assert _look_up(page, text) == "error", text
        assert words in page.locator(STATUS).inner_text(), (text, page.locator(STATUS).inner_text())
        assert calc.locator('[name="model_id"]').get_attribute("aria-invalid") == "true"
        assert _status_over_hint(page) == 0, "the message is drawn over the field's hint"
        before = _computed(page)  # another input: CPython's numbers for the select's pipeline
        steps = str(10 + len(text))
        calc.locator('[name="steps"]').fill(steps)
        _settled(page, before)
        assert _texts(page) == _text_outputs(_cpython({"steps": steps})), text
    assert not _elsewhere(context), _elsewhere(context)
    assert not errors, errors


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_bad_id_s_message_is_readable(browser, site_url, site_dir, scheme):
    """Under the field, above its hint (not drawn over it), with the contrast WCAG asks of small text (4.5:1); the
    field outlined in a colour that reads (3:1)."""
    path = calculator_pages(site_dir, {NAME})[NAME]
    with local_only_context(browser, viewport={"width": 375, "height": 812}, color_scheme=scheme) as context:
        page = context.new_page()
        page.goto(site_url + path)
        open_workbenches(page)
        assert _look_up(page, "stable-diffusion-xl") == "error"  # refused before anything is fetched
        assert _status_over_hint(page) == 0
        assert page.evaluate(CONTRAST, STATUS) >= 4.5
        # the field itself is outlined as invalid, an outline that shows (WCAG's 3:1 for a control's state; the
        # translucent --md-typeset-del-color it had read at about 1.2:1)
        field = f'[data-calculator="{NAME}"] input[name="model_id"]'
        assert page.get_attribute(field, "aria-invalid") == "true"
        page.evaluate("s => document.querySelector(s).blur()", field)  # (focused, it shows the focus ring instead)
        assert page.evaluate(f"([s, p]) => ({CONTRAST})(s, p)", [field, "outlineColor"]) >= 3
        assert not context.blocked, context.blocked
