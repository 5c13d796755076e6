"""Expand the page directives into HTML/Markdown at build time.

    <!-- calculator: NAME -->   a calculator form with its default results
    <!-- snippet: NAME -->      snippets/NAME.py, highlighted, runnable, with its CPython output
    <!-- figure: NAME -->       a build-time figure with its text alternative
    <!-- figure: NAME hero -->  (or <!-- calculator: NAME hero -->) the page's hero: its one picture, shown in the
                                first screen (data-hero; tests/browser/test_page_shape.py); at most one a page
    <!-- chapter-map -->        the chapter map (content: chapter2.pages.chapter_map)
    <!-- recall-cards -->       the recall check (content: each section's CARDS in chapter2.pages)
    {{ fact: SECTION.NAME }}    a named fact of the page layer (chapter2.pages), formatted there

This module only looks names up and renders them: pages never compute. A
missing fact, or any other `{{ ... }}` left in a page, fails the build with the
page and the name.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import runpy
import tomllib
import traceback
from pathlib import Path

import chapter_map
import equations
import recall

from chapter2 import calculators, charts, pages

DIRECTIVE = re.compile(r"^[ \t]*<!--\s*(calculator|snippet|figure):\s*([\w.-]+)(\s+hero)?\s*-->[ \t]*$", re.M)
CHAPTER_MAP = re.compile(r"^[ \t]*<!--\s*chapter-map\s*-->[ \t]*$", re.M)
RECALL_CARDS = re.compile(r"^[ \t]*<!--\s*recall-cards\s*-->[ \t]*$", re.M)
LEFTOVER = re.compile(r"\{\{.*?\}\}", re.S)
HERO = ' data-hero="true"'  # the page's hero (tests/browser/test_page_shape.py finds it by this attribute)
# The Hub model id field (chapter2.calculators._hub): shown with its Look up button unless the site is built
# with the Hub turned off (build_site.py sets this from extra.hub / CHAPTER2_HUB), for a fully offline deployment.
HUB = {"on": True}


class DirectiveError(RuntimeError):
    pass


def fact_text(name: str, page_path: str) -> str:
    """The page text of fact `name`; an unknown name is a DirectiveError naming the page."""
    try:
        return pages.text(name)
    except pages.UnknownFact as err:
        raise DirectiveError(f"{page_path}: {err}") from err


def expand_facts(text: str, page_path: str) -> str:
    """Replace every `{{ fact: NAME }}`; anything else between double braces is an error.

    Inside an equation (equations.SOURCE: TeX for KaTeX) a fact is written as TeX text, escaped.
    """
    def expand(part: str, in_math: bool) -> str:
        leftover = LEFTOVER.search(pages.FACT_REF.sub(" ", part))
        if leftover:
            hint = " (in TeX, put a space between two braces: `{ {`, `} }`)" if in_math else ""
            raise DirectiveError(f"{page_path}: {leftover.group(0)!r} is not a fact reference{hint}; "
                                 "pages name facts as {{ fact: SECTION.NAME }} and never compute")
        if not in_math:
            return pages.FACT_REF.sub(lambda m: fact_text(m.group(1), page_path), part)
        try:
            return pages.FACT_REF.sub(lambda m: equations.tex_text(fact_text(m.group(1), page_path)), part)
        except equations.EquationError as err:
            raise DirectiveError(f"{page_path}: a fact in {part.strip()[:80]!r}: {err}") from err

    parts = equations.SOURCE.split(text)
    maths = equations.SOURCE.findall(text)
    return "".join(expand(p, False) + (expand(maths[i], True) if i < len(maths) else "") for i, p in enumerate(parts))


def expand(markdown: str, *, page_path: str, root: Path, snippet_cache: dict, pages: set[str] | None = None) -> str:
    if not page_path.endswith(".md"):
        return markdown  # notebooks (docs/notebooks/*.py): mkdocs-jupyter renders them, not Markdown
    existing = pages or set()
    if RECALL_CARDS.search(markdown):  # first, so the cards' facts go through the fact pass below
        markdown = RECALL_CARDS.sub(lambda m: recall.render(existing, page_path), markdown)
    if CHAPTER_MAP.search(markdown):
        markdown = CHAPTER_MAP.sub(lambda m: chapter_map.render(existing, page_path, lambda t: expand_facts(t, page_path)),
                                   markdown)
    markdown = _outside_code(markdown, lambda text: expand_facts(text, page_path))

    heroes = [m.group(2) for m in DIRECTIVE.finditer(markdown) if m.group(3)]
    if len(heroes) > 1:
        raise DirectiveError(f"{page_path}: {len(heroes)} heroes ({', '.join(heroes)}); a page has one hero, "
                             "its one picture: mark only that directive `hero`")

    def block(match):
        kind, name, hero = match.group(1), match.group(2), bool(match.group(3))
        if kind == "calculator":
            return render_calculator(name, hero=hero)
        if kind == "snippet":
            if hero:
                raise DirectiveError(f"{page_path}: snippet {name!r} marked hero; a hero is a figure or a calculator")
            return render_snippet(name, root, snippet_cache, page_path=page_path)
        return render_figure(name, page_path, hero=hero)

    return DIRECTIVE.sub(block, markdown)


def _outside_code(markdown: str, fn) -> str:
    """Apply fn to the text outside fenced code blocks and inline code spans (code shows braces literally)."""
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[ \t]*$|`[^`\n]+`)", markdown, flags=re.M | re.S)
    return "".join(part if i % 2 else fn(part) for i, part in enumerate(parts))


# ---------------------------------------------------------------- calculators
def render_calculator(name: str, *, hero: bool = False) -> str:
    """A calculator: its form, its charts and its other results (the defaults, computed now); `hero` marks it
    as the page's hero (data-hero="true").

    The layout (chapter2.css) needs the charts apart from the other results, so each kind has its
    own list: `.c2-calc__charts` can sit beside the form while the numbers run below both. Every
    result is a `.c2-calc__out` group (a <div> holding one <dt> and its <dd>), so a grid can lay
    the results out as cards. The browser finds outputs by `data-output` (runtime.js), wherever
    they are in the box. A stepper's caption (`Output(kind="caption")`) goes above the charts; outputs
    with `details` go last, behind a closed toggle.
    """
    try:
        calc = calculators.get(name)
    except KeyError as err:
        raise DirectiveError(str(err)) from err
    result = calculators.evaluate(name)  # defaults, computed now by the same function the browser calls
    outputs = result["outputs"]
    fields = "\n".join(_field_html(name, f) for f in calc.fields) + _action_html(calc.action)
    e = html.escape
    shown = [o for o in calc.outputs if not o.details]
    captions = "".join(_caption_html(o, outputs[o.key]) for o in shown if o.kind == "caption")
    charts = [o for o in shown if o.kind == "chart"]
    rows = "\n".join(_output_html(o, outputs[o.key], name) for o in shown if o.kind not in ("chart", "caption"))
    chart_list = ("<dl class=\"c2-calc__charts\">\n" + "\n".join(_output_html(o, outputs[o.key], name) for o in charts)
                  + "\n</dl>\n") if charts else ""
    results = f'<dl class="c2-calc__outputs" aria-live="polite">\n{rows}\n</dl>\n' if rows else ""
    return f"""
<div class="c2-calc" id="calculator-{e(name)}" data-calculator="{e(name)}" data-layout="{calculator_layout(calc)}"{HERO if hero else ""}
 aria-labelledby="c2-calc-{e(name)}-title">
<p class="c2-calc__title" id="c2-calc-{e(name)}-title">{e(calc.title)}</p>
<div class="c2-calc__body">
<form class="c2-calc__form" novalidate>
{fields}
</form>
<p class="c2-calc__message" data-calc-message role="alert" hidden></p>
{captions}{chart_list}{results}{_details_html(calc, outputs)}{compare_panel(calc)}</div>
<p class="c2-calc__status" data-calc-status>Results for the default inputs, computed when this site was built.
Change an input to recompute in your browser.</p>
{_share_html(calc, result)}{stepper_frames(calc)}</div>
"""


def _share_html(calc, result) -> str:
    """The calculator's share row (docs/assets/chapter2/share.js): Copy link (its inputs in the page's URL), CSV and
    JSON (its inputs and numbers, downloaded), Copy as Python (the script that prints its results, shown in the
    panel under the row: `<pre data-python-script>`, the defaults' now), a status line; and the defaults' parsed
    inputs and numbers as a data attribute, so that exporting them needs no Python."""
    from chapter2.calculators._script import python_script

    e = html.escape
    name = calc.name
    script = python_script(name, result["inputs"])
    record = {"title": calc.title, "columns": {f.name: f.column for f in calc.fields},
              "labels": {o.key: o.label for o in calc.outputs}, "inputs": result["inputs"],
              "numbers": result["numbers"]}
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    panel = f"c2-{name}-python"
    return (f'<div class="c2-calc__share" data-calc-share>'
            f'<button type="button" class="c2-share__button" data-share="link">Copy link</button>'
            f'<button type="button" class="c2-share__button" data-share="csv" aria-label="Download the inputs and '
            f'numbers as CSV">CSV</button>'
            f'<button type="button" class="c2-share__button" data-share="json" aria-label="Download the inputs, '
            f'results and numbers as JSON">JSON</button>'
            f'<button type="button" class="c2-share__button" data-share="python" aria-expanded="false" '
            f'aria-controls="{panel}">Copy as Python</button>'
            f'<span class="c2-share__status" data-share-status role="status"></span></div>\n'
            f'<div class="c2-share__python" id="{panel}" hidden><p class="c2-share__note">Runs with the chapter2 wheel '
            f'(page “Use the code”) and prints these results:</p>'
            f'<pre class="c2-share__script" data-python-script data-state="current" tabindex="0" '
            f'aria-label="Python script for these inputs">{e(script)}</pre></div>\n'
            f'<div hidden data-calc-record="{e(data)}"></div>\n')  # (an attribute: instant navigation runs a script again)


def compare_panel(calc) -> str:
    """A comparing calculator's A-beside-B panel (calculators' `compare`), empty and hidden while the toggle is
    off, and in a <template> (inert until used) the table of its default comparison (the toggle on, B's
    defaults), computed now by the function the browser calls. Turning the toggle on puts it in the panel at once
    (runtime-core.js); `data-inputs` holds the inputs it is for, so that the runtime can tell when the panel is
    out of date. Both sides' drawings are left to the browser's answer (the toggle recomputes): carried by the
    page they would add 3 to 11 kB a calculator to pages already near their weight budget."""
    if not calc.compare:
        return ""
    from chapter2.calculators import _compare

    raw = {**calc.defaults(), "compare": "on"}
    shown = {k: v for k, v in raw.items() if calc.applies(next(f for f in calc.fields if f.name == k), raw)}
    inputs = html.escape(json.dumps(shown, ensure_ascii=False))
    return (f'<div class="c2-compare" data-compare-panel hidden></div>\n'
            f'<template data-compare-built data-inputs="{inputs}">'
            f'{_compare.render(calc.name, _compare.compare(calc.name, raw), drawings=False)}</template>\n')


BESIDE_MAX_FIELDS = 6  # a longer form in the narrow column beside a chart is taller than form and chart stacked


def calculator_layout(calc) -> str:
    """"beside" when the box's charts go in a column beside its form (where the box is wide enough), else "stacked".

    Beside suits a short form (at most BESIDE_MAX_FIELDS fields; measured at 1280 px, a form of 8 or more
    fields in that narrow column makes the box taller than form and chart stacked) without a stepper,
    whose Back, slider and Forward need the whole width of the box. chapter2.css reads it as data-layout
    (the class stays "c2-calc" alone: build_site.py's SEARCH_EXCLUDE matches it exactly).
    """
    has_chart = any(o.kind == "chart" for o in calc.outputs)
    shown = [f for f in calc.own if HUB["on"] or f.name != MODEL_ID] + ([1] if calc.compare else [])  # (the toggle:
    # B's fields show only once it is on)
    short = len(shown) <= BESIDE_MAX_FIELDS and not any(f.stepper for f in calc.fields)
    return "beside" if has_chart and short else "stacked"


MODEL_ID = "model_id"
MODEL_IDS = (MODEL_ID, MODEL_ID + "_b")  # A's, and B's where the calculator compares two choices (_compare.py)


def _model_id_html(calc: str, field, fid: str, hint: str) -> str:
    """The model id: one line of text, a Look up button (hub.js runs the lookup; kind "pipeline" for a calculator
    of diffusers pipelines) and the line where the lookup says what it fetched or what went wrong."""
    if not HUB["on"]:
        return ""
    e = html.escape
    kind = "pipeline" if any(f.name == "pipeline" for f in calculators.get(calc).fields) else "llm"
    return (f'<div class="c2-calc__field c2-calc__field--hub"{_shown(calc, field)}><label for="{fid}">{e(field.label)}</label>'
            f'<span class="c2-hub"><input id="{fid}" name="{e(field.name)}" type="text" value="" maxlength="{int(field.max)}" '
            f'autocomplete="off" spellcheck="false" autocapitalize="off" placeholder="org/name" '
            f'aria-describedby="{fid}-status">'
            f'<button type="button" class="md-button c2-hub__lookup" data-hub-lookup="{kind}">Look up</button></span>'
            # the lookup's line and the hint share the field's third row (a subgrid has three: label, control,
            # hint), one above the other, not drawn over each other
            f'<span class="c2-hub__notes"><span class="c2-hub__status" id="{fid}-status" data-hub-status role="status">'
            f'</span>{hint}</span></div>')


def _field_html(calc: str, field) -> str:
    e = html.escape
    fid = f"c2-{calc}-{field.name}"
    hint = f' <span class="c2-calc__hint">{e(field.help)}</span>' if field.help else ""
    if field.name in MODEL_IDS:
        return _model_id_html(calc, field, fid, hint)
    if field.kind == "select":
        opts = "".join(
            f'<option value="{e(str(v))}"{" selected" if str(v) == str(field.default) else ""}>{e(label)}</option>'
            for v, label in field.options)
        paste = ""
        if field.paste:  # shown, as "pasted: <name>", while a config.json is pasted (runtime-core.js)
            opts += f'<option value="{calculators.PASTED}" hidden>pasted config.json</option>'
            paste = f' data-paste="{e(field.paste)}"'
        control = f'<select id="{fid}" name="{e(field.name)}"{paste}>{opts}</select>'
    elif field.kind == "text":
        limit = int(field.max if field.max is not None else 2000)
        control = (f'<textarea id="{fid}" name="{e(field.name)}" rows="3" maxlength="{limit}" '
                   f'autocomplete="off" spellcheck="false">{e(str(field.default))}</textarea>')
    else:
        attrs = []
        for key in ("min", "max", "step"):
            value = getattr(field, key)
            if value is not None:
                attrs.append(f'{key}="{value:g}"')
        if field.kind == "range" and field.max_from:  # its top is another field's value (charts.js keeps it so)
            top = next(f for f in calculators.get(calc).fields if f.name == field.max_from).default
            attrs = [a if not a.startswith("max=") else f'max="{top:g}"' for a in attrs]
            attrs.append(f'data-max-from="{e(field.max_from)}"')
        if field.kind == "range":
            shown, labels = field.default, ""
            if field.options:  # a slider over named positions (2^k): the value shown is the position's label
                names = {int(v): str(label) for v, label in field.options}
                shown = names[int(field.default)]
                labels = f' data-labels="{e(json.dumps(names, ensure_ascii=False))}"'
                attrs.append(f'aria-valuetext="{e(shown)}"')
            control = (f'<input id="{fid}" name="{e(field.name)}" type="range" value="{field.default}" {" ".join(attrs)}{labels}>'
                       f'<output for="{fid}" data-field-value="{e(field.name)}">{e(str(shown))}</output>')
            if field.stepper:  # the slider on a row of its own, Back / Forward (and ±10 on a long one) under it
                return _stepper_html(calc, field, fid, control, hint)
        else:
            mode = "numeric" if field.integer else "decimal"
            control = (f'<input id="{fid}" name="{e(field.name)}" type="text" inputmode="{mode}" '
                       f'value="{e(str(field.default))}" autocomplete="off" spellcheck="false">')
    return (f'<div class="c2-calc__field c2-calc__field--{field.kind}"{_shown(calc, field)}><label for="{fid}">'
            f'{e(field.label)}</label>{control}{hint}</div>')


def _shown(calc: str, field) -> str:
    """A field that applies only to some inputs (`Field.show_when`): which ones (runtime-core.js shows and hides
    it), and `hidden` when the defaults are not among them."""
    if field.show_when is None:
        return ""
    e = html.escape
    name, value = field.show_when
    spec = calculators.get(calc)
    hidden = "" if spec.applies(field, spec.defaults()) else " hidden"
    return f' data-show-field="{e(name)}" data-show-value="{e(str(value))}"{hidden}'


LONG_STEPPER = 20  # a stepper with more steps than this also gets buttons for ten steps back and forward


PLAY = ('<button type="button" class="md-button c2-step c2-play" data-play aria-controls="{fid}" data-playing="false">'
        '<svg class="c2-play__icon" viewBox="0 0 10 10" width="10" height="10" aria-hidden="true">'
        '<path class="c2-play__go" d="M2 1L9 5L2 9Z"/><path class="c2-play__stop" d="M1.5 1h2.5v8h-2.5zM6 1h2.5v8h-2.5z"/>'
        '</svg><span class="c2-play__word">Play</span></button>')


def _stepper_html(calc: str, field, fid: str, slider: str, hint: str) -> str:
    """A step slider and its buttons (charts.js moves the slider by data-step), Play between Back and Forward
    (runtime-core.js plays it: one step, drawn, then the next). A button that cannot move (Back at the
    first step) is aria-disabled from the start, so it says so before any script runs."""
    e = html.escape
    top = _step_top(calculators.get(calc), field)
    moves = [(-10, "−10"), (-1, "Back"), (0, "Play"), (1, "Forward"), (10, "+10")]
    if top - field.min <= LONG_STEPPER:
        moves = moves[1:4]
    buttons = []
    for delta, text in moves:
        if delta == 0:
            buttons.append(PLAY.format(fid=fid))
            continue
        stuck = field.default <= field.min if delta < 0 else field.default >= top
        inner = ('<span aria-hidden="true">◀</span> <span class="c2-step__word">Back</span>' if delta == -1 else
                 '<span class="c2-step__word">Forward</span> <span aria-hidden="true">▶</span>' if delta == 1 else
                 e(text))
        buttons.append(f'<button type="button" class="md-button c2-step" data-step="{delta}" aria-controls="{fid}"'
                       f' aria-disabled="{"true" if stuck else "false"}">{inner}</button>')
    return (f'<div class="c2-calc__field c2-calc__field--range c2-calc__field--stepper" role="group" '
            f'aria-labelledby="{fid}-label"><label id="{fid}-label" for="{fid}">{e(field.label)}</label>'
            f'{slider}<div class="c2-step__buttons">{"".join(buttons)}</div>{hint}</div>')


def _step_top(calc, field) -> int:
    """The last step at the default inputs: the field's max, or the default of the field named by max_from."""
    if field.max_from:
        return int(next(f for f in calc.fields if f.name == field.max_from).default)
    return int(field.max)


FRAME_BUDGET = 250_000  # characters of prebuilt steps one stepper may add to its page (they compress 20-30x)
# A calculator registered with defer_frames=True keeps its prebuilt steps out of the page: stepper_frames puts
# their JSON here and a data-src (from the site's root) in the page; build_site.py writes each file after the
# pages, and runtime-core.js fetches it when the calculator comes near the screen or is first used.
FRAMES_DIR = "assets/chapter2/frames/"
DEFERRED_FRAMES: dict[str, str] = {}


def stepper_frames(calc) -> str:
    """Every step of a stepper at the default inputs, drawn now, as a JSON data block in the page.

    {"field": the step field, "inputs": the other fields' defaults, "frames": {step: {output: value}}}:
    the values compute_json gives (chart and bars HTML, texts), only of the outputs that change with the
    step. runtime-core.js paints a frame when the form holds these inputs and that step, with no Python;
    any other input goes to Python. A stepper whose frames pass FRAME_BUDGET ships every k-th step, k
    one of 2, 5, 10, 20, ... (so that ±10 from the first step, and Play, which moves by such a k on a
    long stepper, land on prebuilt steps; the first, the last and the default always), the others are
    computed on request. With `calc.defer_frames` the block in the page is empty and names the file
    (FRAMES_DIR) that holds the same JSON. Once the page is HTML, build_site.inert_frames puts the block in a
    <template> (instant navigation would run a <script> of the content again, as a plain one).
    """
    step = next((f for f in calc.fields if f.stepper), None)
    if step is None:
        return ""
    values = list(range(int(step.min), _step_top(calc, step) + 1))
    drawn = {v: json.loads(calculators.compute_json(calc.name, json.dumps({step.name: str(v)})))["outputs"]
             for v in values}
    changing = [o.key for o in calc.outputs if len({json.dumps(d[o.key]) for d in drawn.values()}) > 1]
    frames = {str(v): {k: drawn[v][k] for k in changing} for v in values}
    size = len(json.dumps(frames, ensure_ascii=False))  # characters as the page carries them
    stride = next(k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, len(values)) if size / k <= FRAME_BUDGET)
    keep = {str(v) for v in values[::stride]} | {str(values[0]), str(values[-1]), str(int(step.default))}
    payload = {"field": step.name, "inputs": {k: v for k, v in calc.defaults().items() if k != step.name},
               "frames": {v: f for v, f in frames.items() if v in keep}}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "\\u003c!--")
    if calc.defer_frames:  # a file of its own (build_site.py writes DEFERRED_FRAMES), fetched at first use
        DEFERRED_FRAMES[calc.name] = text
        return f'<script type="application/json" data-calc-frames data-src="{FRAMES_DIR}{calc.name}.json"></script>\n'
    return f'<script type="application/json" data-calc-frames>{text}</script>\n'


def _action_html(action) -> str:
    """A calculator's on-request button (charts.js runs it); nothing for most calculators."""
    if action is None:
        return ""
    e = html.escape
    return (f'\n<div class="c2-calc__action"><button type="button" class="md-button md-button--primary" '
            f'data-calc-action="{e(action.call)}" data-busy="{e(action.busy)}">{e(action.label)}</button>'
            f'<span class="c2-calc__hint" data-calc-action-status role="status"></span></div>')


def _caption_html(output, value) -> str:
    """A stepper's caption: one line above its figures, in a live region (role="status": polite), so a screen
    reader hears what each step shows as it is drawn, and a reader watching it play reads it there."""
    return (f'<p class="c2-calc__caption" data-output="{html.escape(output.key)}" data-caption role="status">'
            f'{html.escape(value)}</p>\n')


def _details_html(calc, outputs) -> str:
    """The outputs behind a closed toggle (`Output(details=...)`), one <details> per summary, in order."""
    blocks: dict[str, list] = {}
    for o in calc.outputs:
        if o.details:
            blocks.setdefault(o.details, []).append(o)
    return "".join(
        f'<details class="c2-calc__more"><summary>{html.escape(summary)}</summary>\n<dl class="c2-calc__outputs">\n'
        + "\n".join(_output_html(o, outputs[o.key], calc.name) for o in group) + "\n</dl>\n</details>\n"
        for summary, group in blocks.items())


def _output_html(output, value, calc: str = "") -> str:
    """One result as a `.c2-calc__out` group: its label (<dt>) and its value (<dd data-output>)."""
    e = html.escape
    if output.kind == "chart":  # the SVG the browser gets from compute_json (charts.render); not in the search index
        return (f'<div class="c2-calc__out c2-calc__out--chart"><dt>{e(output.label)}</dt>'
                f'<dd data-output="{e(output.key)}" data-kind="chart" aria-live="off" data-search-exclude>'
                f'{calculators.render_chart(calc, output, value)}</dd></div>')
    if output.kind == "bars":
        return (f'<div class="c2-calc__out c2-calc__out--wide"><dt>{e(output.label)}</dt>'
                f'<dd data-output="{e(output.key)}" data-kind="bars">{charts.render_bars(value, shares=output.shares)}</dd></div>')
    if output.free_text:  # echoed text and step tables: full width, lines kept
        return (f'<div class="c2-calc__out c2-calc__out--wide"><dt>{e(output.label)}</dt>'
                f'<dd data-output="{e(output.key)}" data-free-text>{e(value)}</dd></div>')
    return f'<div class="c2-calc__out"><dt>{e(output.label)}</dt><dd data-output="{e(output.key)}">{e(value)}</dd></div>'


# ---------------------------------------------------------------- snippets
def run_snippet(path: Path) -> str:
    """Run a snippet in CPython as `python snippets/NAME.py` would, returning what it prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(str(path), run_name="__main__")
        except Exception as err:
            raise DirectiveError(f"snippet {path.name} failed at build time:\n{traceback.format_exc()}") from err
    return out.getvalue()


def render_snippet(name: str, root: Path, cache: dict, page_path: str = "") -> str:
    """A snippet block. `cache` (one dict per build) holds each snippet's output, and which pages
    already have the note on running the snippets outside the browser: the first block of a page gets it."""
    path = root / "snippets" / f"{name}.py"
    if not path.exists():
        raise DirectiveError(f"snippet {name!r}: {path} does not exist")
    source = path.read_text()
    if name not in cache:
        cache[name] = run_snippet(path)
    install = ""
    if ("install-note", page_path) not in cache:  # a tuple key never collides with a snippet name
        cache[("install-note", page_path)] = True
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        whl = f"{project['name']}-{project['version']}-py3-none-any.whl"  # the site's wheel (wheel.build_wheel)
        link = "../" * page_path.count("/") + f"pyodide/{whl}"  # relative to the page source: MkDocs checks it
        install = (f"To run these snippets outside the browser: download [{whl}]({link}){{ download }}, "
                   f"`pip install {whl}` (it needs only numpy), save a snippet as a file and run it with `python`.\n"
                   "{: .c2-snippet__install }\n")
    e = html.escape
    fence = "````"
    return f"""
<div class="c2-snippet" data-snippet="{e(name)}" markdown>

{fence}python title="snippets/{name}.py"
{source.rstrip()}
{fence}

<textarea class="c2-snippet__editor" data-snippet-source aria-label="Edit snippets/{e(name)}.py" spellcheck="false"
 hidden>{e(source)}</textarea>
<div class="c2-snippet__bar"><button type="button" class="md-button md-button--primary" data-action="run">Run</button>
<button type="button" class="md-button" data-action="edit" aria-pressed="false">Edit</button>
<button type="button" class="md-button" data-action="reset">Reset</button>
<span class="c2-snippet__status" data-snippet-status role="status">Output below is from CPython at build time.</span></div>
<pre class="c2-snippet__output" data-snippet-output aria-live="polite" tabindex="0">{e(cache[name])}</pre>

{install}
</div>
"""


# ---------------------------------------------------------------- figures
def render_figure(name: str, page_path: str, *, hero: bool = False) -> str:
    """A Markdown image relative to the page's source, so MkDocs checks and rewrites the link. A hero is in the
    first screen, so it loads at once (no loading=lazy)."""
    from chapter2.host import figures

    try:
        alt = figures.alt_text(name)
    except KeyError as err:
        raise DirectiveError(f"{page_path}: unknown figure {name!r}") from err
    prefix = "../" * page_path.count("/")
    alt_md = alt.replace("[", "(").replace("]", ")")
    lazy = "" if hero else "{ loading=lazy }"
    return (f'\n<figure class="c2-figure" id="figure-{name}"{HERO if hero else ""} markdown>\n\n'
            f"![{alt_md}]({prefix}figures/{name}.svg){lazy}\n\n"
            f"<figcaption>{html.escape(alt)}</figcaption>\n</figure>\n")
