"""Every YAML example in the docs is a tournament file that loads, and runs,
as written when saved beside the demos in ``tournaments/``."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from arena.config import parse_config
from arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parent.parent
FENCED_YAML = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


def yaml_examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")]):
        for number, match in enumerate(FENCED_YAML.finditer(page.read_text()), start=1):
            found.append((f"{page.relative_to(ROOT)}#{number}", match.group(1)))
    return found


def test_the_docs_have_yaml_examples():
    assert any(name.startswith("docs/tournaments.md") for name, _ in yaml_examples())


@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("name, text", yaml_examples(), ids=[name for name, _ in yaml_examples()])
def test_a_yaml_example_loads_and_runs_beside_the_demos(name, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # as written: nothing may depend on where the command is run from
    config = parse_config(text, path=ROOT / "tournaments" / "example.yaml")
    assert config.output.is_relative_to(ROOT), "the output is relative to the file, inside the project"
    summary = run_tournament(replace(config, output=tmp_path / "results"))
    assert summary.played == summary.total > 0
    assert not [r for r in summary.records if r.forfeit_by is not None], "the example's bots must play"
