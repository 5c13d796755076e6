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
from dataclasses import dataclass
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
DIRECTIVE = re.compile(r"<!--\s*(calculator|snippet|figure):\s*NAME(\s+hero)?\s*-->")
PAGES_MD = [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]


def check_span(span: str, named_files: list[Path]) -> str | None:
    if COMMAND.match(span):
        return check_command(span)
    if m := FACT.fullmatch(span):
        return None if m.group(1) == "SECTION.NAME" or m.group(1) in pages.names() else f"no fact {m.group(1)}"
    if DIRECTIVE.fullmatch(span):
        return None if span in DIRECTIVES else f"docs/hooks/directives.py expands no {span}"
    if HTML_TAG.match(span):  # page markup: its opening tag is written so on some page
        opening = span[:span.index(">") + 1]
        return None if any(opening in page for page in PAGES_MD) else f"no page of docs/ has {opening}"
    if "/" in span and " " not in span:
        return check_path(span)
    if re.fullmatch(r"chapter2(\.\w+)*", span):
        return check_dotted(span)
    texts = [p.read_text(errors="replace") for p in named_files if p.is_file()]  # (a built site/ holds .gz files)
    return None if any(span in t for t in texts) else f"{span!r} appears in none of {[p.relative_to(ROOT).as_posix() for p in named_files]}"


HTML_TAG = re.compile(r"</?[a-z]+[^/]*>")


def files_named(body: str) -> list[Path]:
    """The files a section names: its paths (a folder stands for its files), scripts in its commands."""
    found = []
    for span in spans(body):
        for word in span.split():
            if "/" in word and not HTML_TAG.fullmatch(word):  # "</details>" is markup, not a path
                for path in resolve_path(word):
                    found += sorted(path.glob("*")) if path.is_dir() else [path]
    return [p for p in found if p.is_file()]


def test_contributing_exists_and_has_the_recipes():
    text = CONTRIBUTING.read_text()
    for heading in ["The layout in one picture", "Add a fact", "Add a calculator", "Add a figure", "Add a snippet",
                    "Add a recall card", "Add a model config", "Add a model family", "Add a layout or expert rule",
                    "Add a layer kind", "Add a multimodal wrapper", "Run things", "What CI checks"]:
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


# -----------------------------------------------------------------------------
# The model recipes, performed: a made-up family, rule, layer kind and wrapper, each added in the one place its
# recipe names, then read from a config.json and counted; every number is worked out by hand beside it.

TOY = {"vocab_size": 100, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 4, "num_attention_heads": 4,
       "num_key_value_heads": 2, "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False,
       "sliding_window": None}
# by hand, per layer: q 16 x 16, k and v 16 x (2 heads x 4) each, o 16 x 16; a gated MLP 3 x 16 x 32; 2 norms of 16
ATTENTION, MLP, NORMS = 16 * 16 + 2 * 16 * 8 + 16 * 16, 3 * 16 * 32, 2 * 16
EMBEDDING = HEAD = 100 * 16


@pytest.fixture
def registry(monkeypatch):
    """The model registry as shipped, restored after a test adds a family (an entry in a shape file's FAMILIES,
    then the registry built again as importing the package builds it) or a layer kind (a class, registered when
    it is defined)."""
    from chapter2.models import families
    from chapter2.models.layers import KINDS, LABELS

    kinds, labels = dict(KINDS), dict(LABELS)
    yield monkeypatch
    monkeypatch.undo()
    KINDS.clear(), KINDS.update(kinds), LABELS.clear(), LABELS.update(labels)
    families._index()


def _add(registry, shape: str, entry):
    """The recipe's one place: an entry appended to `FAMILIES` of src/chapter2/models/families/<shape>.py."""
    from chapter2.models import families

    module = importlib.import_module(f"chapter2.models.families.{shape}")
    registry.setattr(module, "FAMILIES", module.FAMILIES + (entry,))
    families._index()  # what importing the package does


def test_recipe_add_a_model_family_that_fits_the_rules(registry):
    from chapter2.models import ModelConfig, families, rules
    from chapter2.models.families import family

    _add(registry, "dense", family("Toy", "toy", ["ToyForCausalLM"], "ToyConfig", "a model made up for this test",
                                   TOY, layout=rules.one_window))
    c = ModelConfig.from_hf({"architectures": ["ToyForCausalLM"], "sliding_window": 3})
    assert c.family_label == "Toy" and families.FAMILIES[-1].label == "Toy"
    assert c.params().total == EMBEDDING + 4 * (ATTENTION + MLP + NORMS) + 16 + HEAD == 12560
    assert c.layer_types == ("sliding_attention",) * 4 and c.defaulted[:2] == ("hidden_size", "num_attention_heads")
    assert c.kv_cache_bytes(10, dtype="bf16") == 4 * 3 * (2 * 2 * 4) * 2  # 4 layers x 3 tokens held x K, V x bf16
    assert c.flops_per_token(10) == 2 * (4 * (ATTENTION + MLP) + HEAD) + 4 * 2 * 4 * (4 + 4) * 3
    assert ModelConfig.from_hf({"model_type": "toy"}).architecture == "ToyForCausalLM"  # found by its model_type
    with pytest.raises(ValueError, match=r"config\['num_key_value_heads'\] must be >= 1, got 0"):
        ModelConfig.from_hf({"architectures": ["ToyForCausalLM"], "num_key_value_heads": 0})


def _every_third_full(r, layers: int) -> tuple:
    """A made-up layout: layers 0, 3, 6, ... see everything, the others the last `sliding_window` tokens."""
    window = r.int("sliding_window")
    return ["full_attention" if i % 3 == 0 else "sliding_attention" for i in range(layers)], window, None


def _odd_layers_route(r, fam, layers: int, intermediate: int) -> dict:
    """A made-up expert rule: the odd layers route among `num_local_experts` experts of the dense width."""
    return dict(num_experts=r.int("num_local_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate, moe_layers=tuple(range(1, layers, 2)))


def test_recipe_add_a_layout_and_an_expert_rule(registry):
    from chapter2.models import ModelConfig
    from chapter2.models.families import family

    _add(registry, "moe", family("Toy-MoE", "toy_moe", ["ToyMoeForCausalLM"], "ToyMoeConfig", "made up", {
        **TOY, "sliding_window": 4, "num_local_experts": 6, "num_experts_per_tok": 2},
        layout=_every_third_full, experts=_odd_layers_route))
    c = ModelConfig.from_hf({"architectures": ["ToyMoeForCausalLM"]})
    assert c.layer_types == ("full_attention", "sliding_attention", "sliding_attention", "full_attention")
    assert c.moe_layers == (1, 3) and c.sliding_window == 4
    p = c.params()  # 2 dense layers, 2 MoE layers of 6 experts (2 read per token) and a router of 6 x 16 each
    assert p.total == EMBEDDING + 4 * (ATTENTION + NORMS) + 2 * MLP + 2 * (6 * MLP + 6 * 16) + 16 + HEAD
    assert p.active == p.total - 2 * 4 * MLP
    groups = {g.kind: (g.layers, g.tokens) for g in c.kv_cache_breakdown(100)}
    assert groups == {"full_attention": (2, 100), "sliding_attention": (2, 4)}
    with pytest.raises(TypeError, match=r"config\['num_local_experts'\] must be a whole number, got 'six'"):
        ModelConfig.from_hf({"architectures": ["ToyMoeForCausalLM"], "num_local_experts": "six"})


def test_recipe_add_a_layer_kind(registry):
    from chapter2.calculators import _models, model_diagram
    from chapter2.models import ModelConfig
    from chapter2.models.families import family
    from chapter2.models.layers.recurrent import Mixer

    @dataclass(frozen=True)
    class ToyScan(Mixer):
        """A made-up recurrent layer: in and out projections h -> w -> h, a w x w state."""

        width: int
        state_dtype: str = "fp32"
        name = "toy_scan"
        label = "toy scan"
        flops_per_state = 3

        def weights(self, hidden: int) -> tuple[int, int]:
            return 2 * hidden * self.width, self.width

        def state(self, hidden: int) -> tuple[int, int]:
            return 0, self.width * self.width

        def describe(self, hidden: int) -> str:
            return f"a {self.width} × {self.width} state, {hidden:,} in and out"

        @classmethod
        def read(cls, r, sizes=None):
            return cls(width=r.int("toy_width"))

    def scan_then_attend(r, layers: int) -> tuple:
        return ["toy_scan" if i % 2 == 0 else "full_attention" for i in range(layers)], None, None

    _add(registry, "hybrid", family("Toy hybrid", "toy_hybrid", ["ToyHybridForCausalLM"], "ToyHybridConfig", "made up",
                                    {**TOY, "toy_width": 8}, layout=scan_then_attend, mixer=ToyScan.read))
    c = ModelConfig.from_hf({"architectures": ["ToyHybridForCausalLM"]})
    scan = 2 * 16 * 8 + 8  # one layer's weights, from the class
    assert ("toy scan layers", 2 * scan, 2 * scan) in [(p.part, p.total, p.active) for p in c.param_breakdown()]
    assert c.params().total == EMBEDDING + 2 * ATTENTION + 2 * scan + 4 * (MLP + NORMS) + 16 + HEAD
    assert c.state_layers == (0, 2) and c.state_elements(0) == (0, 64)
    assert c.state_bytes("bf16") == 2 * 64 * 4  # two layers' 8 x 8 states in fp32
    assert c.kv_cache_bytes(10) == 2 * 10 * (2 * 2 * 4) * 2 + 2 * 64 * 4
    assert c.state_flops_per_token() == 2 * 3 * 64
    # 2 x the weights a token multiplies by, 2 attention layers x 10 keys x 2 x 4 heads x (4 + 4), 3 per state number
    assert c.flops_per_token(10) == 2 * (2 * ATTENTION + 2 * 2 * 16 * 8 + 4 * MLP + HEAD) + 2 * 10 * 2 * 4 * (4 + 4) + 2 * 3 * 64
    assert _models.KIND_NAMES["toy_scan"] == "toy scan"  # the calculators' name for it
    assert "2 toy scan x 64 state values (fixed, recurrent state in FP32)" in _models.kv_breakdown(c, 10, "bf16")
    diagram = str(model_diagram.block_diagram(c))
    assert "toy scan (2 of 4 layers)" in diagram and "a 8 × 8 state, 16 in and out" in diagram


def test_recipe_add_a_multimodal_wrapper(registry):
    from chapter2.models import ModelConfig, families
    from chapter2.models.families import Wrapper, family, tied_by_outer, tower

    def count(r, text_hidden: int, outer: dict) -> int:  # blocks of d x d, then a projector d -> text hidden
        d = r.int("hidden_size")
        return r.int("num_hidden_layers") * d * d + d * text_hidden

    toy_tower = tower("Toy vision tower", "ToyVisionConfig", {"hidden_size": 8, "num_hidden_layers": 2}, count)
    wrapper = Wrapper("ToyVLForConditionalGeneration", "toy_vl", tied_by_outer(False), (toy_tower,))
    _add(registry, "multimodal", family("Toy", "toy_text", ["ToyForCausalLM"], "ToyTextConfig", "made up", TOY,
                                        wrapper=wrapper))
    c = ModelConfig.from_hf({"architectures": ["ToyVLForConditionalGeneration"], "text_config": {"vocab_size": 50},
                             "vision_config": {"hidden_size": 4}})
    assert c.wrapper == "ToyVLForConditionalGeneration" and c.family_label == "Toy" and c.vocab_size == 50
    assert c.vision_params == 2 * 4 * 4 + 4 * 16 and c.vision_defaulted == ("num_hidden_layers",)
    assert c.params().lm_head == 50 * 16  # the outer config's tie_word_embeddings (default false) unties it
    assert families.family_of("ToyVLForConditionalGeneration").label == "Toy"
    assert ModelConfig.from_hf({"model_type": "toy_vl"}).architecture == "ToyVLForConditionalGeneration"
    with pytest.raises(TypeError, match=r"config\['vision_config'\] must be a JSON object"):
        ModelConfig.from_hf({"architectures": ["ToyVLForConditionalGeneration"], "vision_config": [1]})
