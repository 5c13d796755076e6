"""The Python dependencies are installed from pylock.toml: complete, hashed, CPU-only, used by `make setup`."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _lock_script():
    spec = importlib.util.spec_from_file_location("c2_lock_under_test", ROOT / "scripts" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lock_is_hashed_and_cpu_only():
    lock = _lock_script().check((ROOT / "pylock.toml").read_text())  # no torch, no CUDA, https + sha256 everywhere
    names = {canonicalize_name(p["name"]) for p in lock["packages"]}
    assert not {n for n in names if n.startswith("nvidia-")}
    assert len(names) == len(lock["packages"]), "one entry per package"


def test_every_declared_dependency_is_locked_at_a_version_it_accepts():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = tomllib.loads((ROOT / "pylock.toml").read_text())
    versions = {canonicalize_name(p["name"]): Version(p["version"]) for p in lock["packages"]}
    declared = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    assert "pymdown-extensions" in {Requirement(d).name for d in project["optional-dependencies"]["docs"]}
    for dep in map(Requirement, declared):
        if dep.marker and not dep.marker.evaluate({"platform_system": "Linux", "sys_platform": "linux"}):
            continue
        name = canonicalize_name(dep.name)
        if name == "torch":
            continue  # installed apart, at the Makefile's TORCH_PIN
        assert name in versions, f"{dep} is declared in pyproject.toml but not in pylock.toml: run `make lock`"
        assert dep.specifier.contains(versions[name], prereleases=True), f"{dep}: the lock has {versions[name]}; run `make lock`"


def test_setup_installs_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"(?ms)^\.venv/\.installed:(.*?)^\s*touch \$@", makefile)
    assert recipe and "pylock.toml" in recipe.group(0)
    steps = recipe.group(1)
    assert "-r pylock.toml" in steps and "--no-deps -e ." in steps and '--no-deps $(TORCH_INDEX) "$(TORCH_PIN)"' in steps
    assert "--require-hashes" in steps  # the pip and the uv that install the lock are themselves pinned by hash
    assert re.search(r"(?m)^UV_BOOTSTRAP := uv==[\d.]+ --hash=sha256:[0-9a-f]{64}", makefile)
    assert re.search(r"uv pip install [^\n]*-r pylock\.toml", steps), "uv reads the lock"
    assert re.search(r"(?m)^lock:", makefile), "`make lock` regenerates the lock"
