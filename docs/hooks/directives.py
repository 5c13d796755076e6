"""Expand the page directives into HTML/Markdown at build time.

    <!-- calculator: NAME -->   a calculator form with its default results
    <!-- snippet: NAME -->      snippets/NAME.py, highlighted, runnable, with its CPython output
    <!-- figure: NAME -->       a build-time figure with its text alternative
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

DIRECTIVE = re.compile(r"^[ \t]*<!--\s*(calculator|snippet|figure):\s*([\w.-]+)\s*-->[ \t]*$", re.M)
CHAPTER_MAP = re.compile(r"^[ \t]*<!--\s*chapter-map\s*-->[ \t]*$", re.M)
RECALL_CARDS = re.compile(r"^[ \t]*<!--\s*recall-cards\s*-->[ \t]*$", re.M)
LEFTOVER = re.compile(r"\{\{.*?\}\}", re.S)


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

    def block(match):
        kind, name = match.group(1), match.group(2)
        if kind == "calculator":
            return render_calculator(name)
        if kind == "snippet":
            return render_snippet(name, root, snippet_cache, page_path=page_path)
        return render_figure(name, page_path)

    return DIRECTIVE.sub(block, markdown)


def _outside_code(markdown: str, fn) -> str:
    """Apply fn to the text outside fenced code blocks and inline code spans (code shows braces literally)."""
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[ \t]*$|`[^`\n]+`)", markdown, flags=re.M | re.S)
    return "".join(part if i % 2 else fn(part) for i, part in enumerate(parts))


# ---------------------------------------------------------------- calculators
def render_calculator(name: str) -> str:
    """A calculator: its form, its charts and its other results (the defaults, computed now).

    The layout (chapter2.css) needs the charts apart from the other results, so each kind has its
    own list: `.c2-calc__charts` can sit beside the form while the numbers run below both. Every
    result is a `.c2-calc__out` group (a <div> holding one <dt> and its <dd>), so a grid can lay
    the results out as cards. The browser finds outputs by `data-output` (runtime.js), wherever
    they are in the box.
    """
    try:
        calc = calculators.get(name)
    except KeyError as err:
        raise DirectiveError(str(err)) from err
    outputs = calculators.compute(name)  # defaults, computed now by the same function the browser calls
    fields = "\n".join(_field_html(name, f) for f in calc.fields) + _action_html(calc.action)
    charts = [o for o in calc.outputs if o.kind == "chart"]
    rows = "\n".join(_output_html(o, outputs[o.key], name) for o in calc.outputs if o.kind != "chart")
    e = html.escape
    chart_list = ("<dl class=\"c2-calc__charts\">\n" + "\n".join(_output_html(o, outputs[o.key], name) for o in charts)
                  + "\n</dl>\n") if charts else ""
    results = f'<dl class="c2-calc__outputs" aria-live="polite">\n{rows}\n</dl>\n' if rows else ""
    return f"""
<div class="c2-calc" id="calculator-{e(name)}" data-calculator="{e(name)}" data-layout="{calculator_layout(calc)}"
 aria-labelledby="c2-calc-{e(name)}-title">
<p class="c2-calc__title" id="c2-calc-{e(name)}-title">{e(calc.title)}</p>
<div class="c2-calc__body">
<form class="c2-calc__form" novalidate>
{fields}
</form>
<p class="c2-calc__message" data-calc-message role="alert" hidden></p>
{chart_list}{results}</div>
<p class="c2-calc__status" data-calc-status>Results for the default inputs, computed when this site was built.
Change an input to recompute in your browser.</p>
{stepper_frames(calc)}</div>
"""


BESIDE_MAX_FIELDS = 6  # a longer form in the narrow column beside a chart is taller than form and chart stacked


def calculator_layout(calc) -> str:
    """"beside" when the box's charts go in a column beside its form (where the box is wide enough), else "stacked".

    Beside suits a short form (at most BESIDE_MAX_FIELDS fields; measured at 1280 px, a form of 8 or more
    fields in that narrow column makes the box taller than form and chart stacked) without a stepper,
    whose Back, slider and Forward need the whole width of the box. chapter2.css reads it as data-layout
    (the class stays "c2-calc" alone: build_site.py's SEARCH_EXCLUDE matches it exactly).
    """
    has_chart = any(o.kind == "chart" for o in calc.outputs)
    short = len(calc.fields) <= BESIDE_MAX_FIELDS and not any(f.stepper for f in calc.fields)
    return "beside" if has_chart and short else "stacked"


def _field_html(calc: str, field) -> str:
    e = html.escape
    fid = f"c2-{calc}-{field.name}"
    hint = f' <span class="c2-calc__hint">{e(field.help)}</span>' if field.help else ""
    if field.kind == "select":
        opts = "".join(
            f'<option value="{e(str(v))}"{" selected" if str(v) == str(field.default) else ""}>{e(label)}</option>'
            for v, label in field.options)
        control = f'<select id="{fid}" name="{e(field.name)}">{opts}</select>'
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
    return f'<div class="c2-calc__field c2-calc__field--{field.kind}"><label for="{fid}">{e(field.label)}</label>{control}{hint}</div>'


LONG_STEPPER = 20  # a stepper with more steps than this also gets buttons for ten steps back and forward


def _stepper_html(calc: str, field, fid: str, slider: str, hint: str) -> str:
    """A step slider and its buttons (charts.js moves the slider by data-step). A button that cannot move
    (Back at the first step) is aria-disabled from the start, so it says so before any script runs."""
    e = html.escape
    top = _step_top(calculators.get(calc), field)
    moves = [(-10, "−10"), (-1, "Back"), (1, "Forward"), (10, "+10")]
    if top - field.min <= LONG_STEPPER:
        moves = moves[1:3]
    buttons = []
    for delta, text in moves:
        stuck = field.default <= field.min if delta < 0 else field.default >= top
        inner = ('<span aria-hidden="true">◀</span> Back' if delta == -1 else
                 'Forward <span aria-hidden="true">▶</span>' if delta == 1 else e(text))
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


def stepper_frames(calc) -> str:
    """Every step of a stepper at the default inputs, drawn now, as a JSON data block in the page.

    {"field": the step field, "inputs": the other fields' defaults, "frames": {step: {output: value}}}:
    the values compute_json gives (chart and bars HTML, texts), only of the outputs that change with the
    step. runtime-core.js paints a frame when the form holds these inputs and that step, with no Python;
    any other input goes to Python. A stepper whose frames pass FRAME_BUDGET ships every k-th step, k
    one of 2, 5, 10, 20, ... (so that ±10 from the first step lands on prebuilt steps; the first and the
    default always), the others are computed on request.
    """
    step = next((f for f in calc.fields if f.stepper), None)
    if step is None:
        return ""
    values = list(range(int(step.min), _step_top(calc, step) + 1))
    drawn = {v: json.loads(calculators.compute_json(calc.name, json.dumps({step.name: str(v)})))["outputs"]
             for v in values}
    changing = [o.key for o in calc.outputs if len({json.dumps(d[o.key]) for d in drawn.values()}) > 1]
    frames = {str(v): {k: drawn[v][k] for k in changing} for v in values}
    size = len(json.dumps(frames))
    stride = next(k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, len(values)) if size / k <= FRAME_BUDGET)
    keep = {str(v) for v in values[::stride]} | {str(values[0]), str(int(step.default))}
    payload = {"field": step.name, "inputs": {k: v for k, v in calc.defaults().items() if k != step.name},
               "frames": {v: f for v, f in frames.items() if v in keep}}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "\\u003c!--")
    return f'<script type="application/json" data-calc-frames>{text}</script>\n'


def _action_html(action) -> str:
    """A calculator's on-request button (charts.js runs it); nothing for most calculators."""
    if action is None:
        return ""
    e = html.escape
    return (f'\n<div class="c2-calc__action"><button type="button" class="md-button md-button--primary" '
            f'data-calc-action="{e(action.call)}" data-busy="{e(action.busy)}">{e(action.label)}</button>'
            f'<span class="c2-calc__hint" data-calc-action-status role="status"></span></div>')


def _output_html(output, value, calc: str = "") -> str:
    """One result as a `.c2-calc__out` group: its label (<dt>) and its value (<dd data-output>)."""
    e = html.escape
    if output.kind == "chart":  # the SVG the browser gets from compute_json (charts.render); not in the search index
        return (f'<div class="c2-calc__out c2-calc__out--chart"><dt>{e(output.label)}</dt>'
                f'<dd data-output="{e(output.key)}" data-kind="chart" aria-live="off" data-search-exclude>'
                f'{calculators.render_chart(calc, output, value)}</dd></div>')
    if output.kind == "bars":
        return (f'<div class="c2-calc__out c2-calc__out--wide"><dt>{e(output.label)}</dt>'
                f'<dd data-output="{e(output.key)}" data-kind="bars">{charts.render_bars(value)}</dd></div>')
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
def render_figure(name: str, page_path: str) -> str:
    """A Markdown image relative to the page's source, so MkDocs checks and rewrites the link."""
    from chapter2.host import figures

    try:
        alt = figures.alt_text(name)
    except KeyError as err:
        raise DirectiveError(f"{page_path}: unknown figure {name!r}") from err
    prefix = "../" * page_path.count("/")
    alt_md = alt.replace("[", "(").replace("]", ")")
    return (f'\n<figure class="c2-figure" id="figure-{name}" markdown>\n\n'
            f"![{alt_md}]({prefix}figures/{name}.svg){{ loading=lazy }}\n\n"
            f"<figcaption>{html.escape(alt)}</figcaption>\n</figure>\n")
