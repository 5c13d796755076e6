"""CONTRIBUTING.md and README.md name only things that exist, so their recipes cannot rot.

CONTRIBUTING.md is read as its author wrote it, and every code span in it is checked:

- a path (`src/chapter2/pages/`, `tests/test_pages_<section>.py`; `<...>`, NAME and SECTION
  are placeholders) exists in the repository, or is a build output that .gitignore lists;
- a module or function (`chapter2.models.load_config`) imports;
- a command (`make test-fast`, `.venv/bin/python -m MODULE`, `bash scripts/...`) names a
  Makefile target, a runnable module or a file, and each `--option` or sub-command it passes
  appears in that script or module;
- a fact (`{{ fact: neural_networks.prefill_tokens }}`) is one the page layer defines, and a
  directive (`<!-- snippet: NAME -->`) one the build hook expands;
- any other name (`CARDS`, `BREAKS`, `@figure`, `_source`) appears in a file that the same
  section names: rename it in the code and this test says which recipe to update.

The commands in the fenced blocks are checked the same way, and so are the paths of the
layout picture. README.md: its commands and the paths it names.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from chapter2 import pages

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SPAN = re.compile(r"`([^`\n]+)`")
DIRECTIVES = (ROOT / "docs" / "hooks" / "directives.py").read_text()
IGNORED = [line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines() if line.strip()]


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-zA-Z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for the text before the first `## ` heading and each `## ` section."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return [("(top)", parts[0])] + list(zip(parts[1::2], parts[2::2], strict=True))


def spans(text: str) -> list[str]:
    return SPAN.findall(FENCE.sub("", text))


def glob_of(path: str) -> str:
    """A path with its placeholders (`<section>`, NAME, SECTION) turned into `*`."""
    return re.sub(r"<[^>]+>|\bNAME\b|\bSECTION\b", "*", path).rstrip("/")


def is_ignored(path: str) -> bool:
    return path.strip("/").split("/")[0] in IGNORED


def resolve_path(path: str) -> list[Path]:
    """The files and folders a path (or glob) names; [] when none exists."""
    pattern = glob_of(path)
    if "*" in pattern:
        return sorted(ROOT.glob(pattern))
    return [ROOT / pattern] if (ROOT / pattern).exists() else []


def check_path(path: str) -> str | None:
    if resolve_path(path) or is_ignored(path):
        return None
    return f"no such path: {path}"


def check_dotted(name: str) -> str | None:
    """`chapter2.models.load_config`: a module, then attributes."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return f"{'.'.join(parts[:i])} has no {attr!r} ({name})"
            obj = getattr(obj, attr)
        return None
    return f"cannot import {name}"


def module_source(module: str) -> tuple[str | None, str]:
    """(error, source text of what `python -m module` runs)."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return f"no module {module}", ""
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        spec = importlib.util.find_spec(module + ".__main__")
        if spec is None:
            return f"{module} is a package without __main__: python -m cannot run it", ""
    return None, Path(spec.origin).read_text()


def check_command(line: str) -> str | None:
    """One shell command as the docs show it (a trailing `# comment` is dropped)."""
    words = shlex.split(line, comments=True)
    if not words:
        return None
    program, args = words[0], words[1:]
    if program == "make":
        missing = [a for a in args if not a.startswith("-") and "=" not in a and a not in make_targets()]
        return f"make: no target {missing}" if missing else None
    source = None
    if program in {"python", "python3", ".venv/bin/python"}:
        if args[:1] == ["-m"]:
            error, source = module_source(args[1])
            if error:
                return error
            if args[1] == "pytest":
                return next((check_path(a) for a in args[2:] if "/" in a and check_path(a)), None)
            args = args[2:]
        else:
            if error := check_path(args[0]):
                return error
            source, args = resolve_path(args[0])[0].read_text(), args[1:]
    elif program == "bash":
        if error := check_path(args[0]):
            return error
        source, args = resolve_path(args[0])[0].read_text(), args[1:]
    elif program.startswith(".venv/bin/"):
        return None if (ROOT / program).exists() or not (ROOT / ".venv").exists() else f"no {program}"
    else:
        return f"unknown kind of command (teach tests/test_contributing.py to check it): {line}"
    unknown = [a for a in args if re.fullmatch(r"--?[\w-]+|[a-z][\w-]*", a) and a not in source]
    return f"{line}: {unknown} not found in what it runs" if unknown else None


COMMAND = re.compile(r"^(make|python3?|bash|\.venv/bin/\S+)( |$)")
FACT = re.compile(r"\{\{\s*fact:\s*([\w.]+)\s*\}\}")
DIRECTIVE = re.compile(r"<!--\s*(calculator|snippet|figure):\s*NAME\s*-->")


def check_span(span: str, named_files: list[Path]) -> str | None:
    if COMMAND.match(span):
        return check_command(span)
    if m := FACT.fullmatch(span):
        return None if m.group(1) == "SECTION.NAME" or m.group(1) in pages.names() else f"no fact {m.group(1)}"
    if DIRECTIVE.fullmatch(span):
        return None if span in DIRECTIVES else f"docs/hooks/directives.py expands no {span}"
    if "/" in span and " " not in span:
        return check_path(span)
    if re.fullmatch(r"chapter2(\.\w+)*", span):
        return check_dotted(span)
    texts = [p.read_text() for p in named_files if p.is_file()]
    return None if any(span in t for t in texts) else f"{span!r} appears in none of {[p.relative_to(ROOT).as_posix() for p in named_files]}"


def files_named(body: str) -> list[Path]:
    """The files a section names: its paths (a folder stands for its files), scripts in its commands."""
    found = []
    for span in spans(body):
        for word in span.split():
            if "/" in word:
                for path in resolve_path(word):
                    found += sorted(path.glob("*")) if path.is_dir() else [path]
    return [p for p in found if p.is_file()]


def test_contributing_exists_and_has_the_recipes():
    text = CONTRIBUTING.read_text()
    for heading in ["The layout in one picture", "Add a fact", "Add a calculator", "Add a figure", "Add a snippet",
                    "Add a recall card", "Add a model config", "Run things", "What CI checks"]:
        assert re.search(rf"^## {heading}", text, re.M), heading


@pytest.mark.parametrize("heading,body", [pytest.param(h, b, id=h) for h, b in sections(CONTRIBUTING.read_text())])
def test_every_name_in_a_contributing_section_exists(heading, body):
    named = files_named(body) or files_named(CONTRIBUTING.read_text())
    problems = [f"`{s}`: {err}" for s in spans(body) if (err := check_span(s, named))]
    assert not problems, f"CONTRIBUTING.md, {heading}:\n" + "\n".join(problems)


def fenced_commands(text: str) -> list[str]:
    return [line for lang, block in FENCE.findall(text) if lang in {"bash", "sh", "console"}
            for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("path", [CONTRIBUTING, README], ids=lambda p: p.name)
def test_every_command_runs_something_that_exists(path):
    commands = fenced_commands(path.read_text()) + [s for s in spans(path.read_text()) if COMMAND.match(s)]
    assert commands
    problems = [f"{c}: {err}" for c in commands if (err := check_command(c))]
    assert not problems, "\n".join(problems)


def test_readme_paths_exist():
    text = README.read_text()
    mime = re.compile(r"(application|text|image)/[\w.+-]+")
    paths = [s for s in spans(text) if "/" in s and " " not in s and not s.startswith(("http", ".venv/bin/")) and not mime.fullmatch(s)]
    paths += [line.split()[0] for lang, block in FENCE.findall(text) if lang == "" for line in block.splitlines()
              if line.strip() and "/" in line.split()[0]]
    assert paths
    problems = [err for p in paths if (err := check_path(p))]
    assert not problems, problems


def test_the_layout_picture_names_real_paths():
    """Folders in the picture exist; a bare file name (build_site.py) lies in the folder named above it."""
    picture = next(block for lang, block in FENCE.findall(CONTRIBUTING.read_text()) if lang == "text")
    problems, folder = [], None
    for line in picture.splitlines():
        for word in re.findall(r"[\w.*<>/-]+", line):
            if "/" in word:
                if error := check_path(word):
                    problems.append(error)
                elif word.endswith("/") and re.match(rf"\W*{re.escape(word)}", line):
                    folder = word
            elif re.fullmatch(r"\w+\.(py|md|json|yml)", word):
                if folder is None or not (ROOT / folder / word).exists():
                    problems.append(f"{word} is not in {folder}")
    assert not problems, problems


def test_the_checks_bite(tmp_path):
    """Names that do not exist are reported."""
    named = [ROOT / "tests" / "test_snippets.py"]
    assert check_span("src/chapter2/no_such_module.py", named)
    assert check_span("tests/test_nothing_<section>.py", named)
    assert check_span("chapter2.models.no_such_function", named)
    assert check_span("make no-such-target", named)
    assert check_span(".venv/bin/python -m chapter2.no_such_module", named)
    assert check_span("bash scripts/device_check.sh --no-such-option", named)
    assert check_span("{{ fact: neural_networks.no_such_fact }}", named)
    assert check_span("NO_SUCH_TABLE", named)
    assert check_span("curl https://example.invalid", named)
    assert not check_span("BREAKS", named)
    assert not check_span("{{ fact: neural_networks.prefill_tokens }}", named)
    assert not check_span("make test-fast", named)


def test_make_serve_restarts_on_code_changes():
    """`make serve` rebuilds on docs/ itself (mkdocs serve) and restarts for code it has imported."""
    recipe = re.search(r"^serve:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "watchmedo auto-restart" in recipe and "mkdocs serve" in recipe
    for folder in ("src/chapter2", "snippets", "docs/hooks"):
        assert f"--directory {folder}" in recipe and (ROOT / folder).is_dir(), folder
    assert (ROOT / ".venv" / "bin" / "watchmedo").exists() or not (ROOT / ".venv").exists()
