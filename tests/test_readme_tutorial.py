"""The README's tutorial commands work as written on a fresh clone.

The clone is a `git clone` of this repository (its committed files only, so no `runs/` folder: `make report` used to
be the only thing that made it), with this environment's `.venv` linked in, since the commands name `.venv/bin/...`
and a clone's own `make setup` takes minutes. The commands are read from the README's tutorial block and run by bash
one after another, changed in two ways to stay fast: the tutorial notebook gets the smallest budget its parameters
take (`TINY`), and `actlab report --only compare` plans without training (`--dry-run`; its sweeps take minutes, and
`make report` runs them).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
TINY = {"seeds": 2, "steps": 4, "compute_steps": 2, "rounds": 1, "n_simulations": 10, "points": 21}


def tutorial_commands(readme: str) -> list[list[str]]:
    """The shell commands of the README's tutorial block (the first bash block under "From an idea to a verdict"),
    each as its words, comments dropped."""
    section = readme.split("## From an idea to a verdict", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "the README's tutorial section has no bash block"
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words:
            commands.append(words)
    return commands


def _as_run_here(words: list[str]) -> list[str]:
    if Path(words[0]).name == "papermill":
        return [*words, *(word for name, value in TINY.items() for word in ("-p", name, str(value)))]
    if Path(words[0]).name == "actlab" and words[1] == "report":
        return [*words, "--dry-run"]
    return words


def test_the_tutorial_block_runs_as_written_on_a_fresh_clone(tmp_path):
    if shutil.which("git") is None or not (README.parent / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(README.parent), str(clone)], check=True, timeout=120)
    (clone / ".venv").symlink_to(Path(sys.prefix))
    with (clone / ".git" / "info" / "exclude").open("a") as exclude:  # .gitignore's `.venv/` matches folders only
        exclude.write(".venv\n")
    assert not (clone / "runs").exists()
    commands = tutorial_commands((clone / "README.md").read_text(encoding="utf-8"))
    assert [Path(words[0]).name for words in commands if Path(words[0]).name != "mkdir"] == [
        "actlab",
        "papermill",
        "actlab",
    ], commands
    environment = {**os.environ, "ACTLAB_DERIVATIONS_DIR": str(tmp_path / "derivations")}
    for words in commands:
        command = shlex.join(_as_run_here(words))
        done = subprocess.run(
            ["bash", "-c", command], cwd=clone, env=environment, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    executed = json.loads((clone / "runs" / "mine.ipynb").read_text(encoding="utf-8"))
    verdicts = "".join(
        "".join(output.get("data", {}).get("text/markdown", "")) for output in executed["cells"][-1].get("outputs", [])
    )
    assert "mine beats relu and gelu" in verdicts  # the notebook reached its last cell, with the saved derivation
    assert (tmp_path / "derivations").is_dir()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True)
    assert status.stdout == ""  # the executed notebook stays out of git
