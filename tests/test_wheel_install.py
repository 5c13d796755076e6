"""The `chapter2` wheel that the site offers installs on its own and runs every snippet.

The wheel is the one the site build makes and offers for download (docs/hooks/wheel.py,
`build_wheel`; site/pyodide/). It goes into a fresh virtual environment with pip resolving its
dependencies from the wheel's own metadata (numpy, held at the version of this environment so
printed arrays format the same). The snippets are copied to a folder outside the repository, so
they cannot import the source tree, and run there with plain `python`: each must exit 0 and print
exactly what its page shows, the build-time output of `run_snippet` (docs/hooks/directives.py).

The site says how to get it: the page "Use the code" (docs/use-the-code.md, linked from the home page) links
the wheel, and the first snippet of each page carries a one-line note with the link and the `pip install` command.
"""

from __future__ import annotations

import importlib.util
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))

def build_wheel(out: Path) -> Path:
    spec = importlib.util.spec_from_file_location("c2_wheel_under_test", ROOT / "docs" / "hooks" / "wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_wheel(ROOT, out)


def build_time_outputs() -> dict[str, str]:
    """What the pages show under each snippet: run_snippet, in a fresh process like the site build."""
    code = ("import json, sys; from pathlib import Path; sys.path.insert(0, 'docs/hooks'); import directives; "
            "print(json.dumps({p.stem: directives.run_snippet(p) for p in sorted(Path('snippets').glob('*.py'))}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def clean_env() -> dict[str, str]:
    """The environment without anything that would point Python at this repository."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


@pytest.mark.slow  # a virtual environment, a pip install and every snippet twice: 8 s warm, over 10 s on a cold pip cache
def test_the_wheel_installs_with_only_numpy_and_runs_every_snippet(tmp_path):
    assert SNIPPETS
    wheel = build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (tmp_path / "constraints.txt").write_text(f"numpy=={np.__version__}\n")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check",
                          "--constraint", str(tmp_path / "constraints.txt"), str(wheel)],
                         capture_output=True, text=True, timeout=600, env=clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr

    # only chapter2 and what its metadata asks for: numpy (no torch, triton, matplotlib, mkdocs ...)
    listed = subprocess.run([str(python), "-c", "import importlib.metadata as m, json; "
                             "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"],
                            capture_output=True, text=True, timeout=60, env=clean_env())
    assert json.loads(listed.stdout) == ["chapter2", "numpy"], listed.stdout + listed.stderr

    readers = tmp_path / "reader"  # outside the repository: `import chapter2` can only find the installed wheel
    readers.mkdir()
    for path in SNIPPETS:
        shutil.copy(path, readers / path.name)
    where = subprocess.run([str(python), "-c", "import chapter2; print(chapter2.__file__)"], cwd=readers,
                           capture_output=True, text=True, timeout=60, env=clean_env())
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr

    expected = build_time_outputs()
    assert set(expected) == {p.stem for p in SNIPPETS}
    failures = []
    for path in SNIPPETS:
        proc = subprocess.run([str(python), path.name], cwd=readers, capture_output=True, text=True, timeout=120, env=clean_env())
        if proc.returncode != 0:
            failures.append(f"{path.name} exited {proc.returncode}:\n{proc.stderr}")
        elif proc.stdout != expected[path.stem]:
            failures.append(f"{path.name} printed something else than its page shows:\n"
                            f"--- page (build time)\n{expected[path.stem]}--- installed wheel\n{proc.stdout}")
    assert not failures, "\n\n".join(failures)


def load_directives():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import directives
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    return directives


def test_the_first_snippet_of_each_page_says_how_to_install_the_wheel():
    directives = load_directives()
    cache = {}  # one per build, shared by every page
    two = "<!-- snippet: collapse_linear -->\n\ntext\n\n<!-- snippet: ops_per_byte -->\n"
    first = directives.expand(two, page_path="neural-networks.md", root=ROOT, snippet_cache=cache)
    again = directives.expand(two, page_path="notebooks/deeper.md", root=ROOT, snippet_cache=cache)
    for page, prefix in ((first, ""), (again, "../")):
        assert page.count("pip install chapter2-0.1.0-py3-none-any.whl") == 1, page
        note = page.index("pip install chapter2")
        assert page.index('data-snippet="collapse_linear"') < note < page.index('data-snippet="ops_per_byte"')
        assert f"]({prefix}pyodide/chapter2-0.1.0-py3-none-any.whl)" in page


def test_the_site_links_the_wheel_it_serves(site_dir):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wheels = [site_dir / "pyodide" / f"{project['name']}-{project['version']}-py3-none-any.whl"]
    assert wheels[0].is_file()
    assert 'href="use-the-code/"' in (site_dir / "index.html").read_text()  # the home page links the page
    page = (site_dir / "use-the-code" / "index.html").read_text()
    assert f'href="../pyodide/{wheels[0].name}"' in page
    assert f"pip install {wheels[0].name}" in html.unescape(re.sub(r"<[^>]+>", "", page))  # the code block is highlighted
    with_snippets = [p for p in site_dir.rglob("index.html") if "data-snippet=" in p.read_text()]
    assert with_snippets
    for page in with_snippets:
        text = html.unescape(page.read_text())
        notes = re.findall(r'<p class="c2-snippet__install"[^>]*>(.*?)</p>', text, re.S)
        assert len(notes) == 1, page
        link = re.search(r'href="([^"]+)"', notes[0]).group(1)
        assert (page.parent / link).resolve() == wheels[0].resolve(), (page, link)
