"""Every YAML example in the docs loads, and the complete ones run, as
written when saved beside the demos in ``tournaments/``.

An example is either a whole tournament file or a fragment showing a few
keys; a fragment is loaded on top of its page's first whole example, as a
reader would add it to their file (a single bot entry joins its bots), with
the project's path for the placeholder ``/path/to/totem-arena``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from arena.run.config import parse_config
from arena.run.tournament import run_tournament
from builders import ROOT, fenced

#: Where the docs write the path of the reader's clone of the project.
PLACEHOLDER = "/path/to/totem-arena"


def yaml_examples() -> list[tuple[str, Path, int]]:
    """Each YAML example of the docs: its test's id, its page, its place
    among the page's blocks.  A whole tournament is named by its ``name:``
    (the suite's tiers name the slow ones: an id that stays when examples
    are added before it), any other by its place."""
    found = []
    for page in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")]):
        for i, (lang, text) in enumerate(fenced(page.read_text())):
            if lang == "yaml":
                fields = yaml.safe_load(text)
                named = isinstance(fields, dict) and is_whole(text) and isinstance(fields.get("name"), str)
                found.append((f"{page.relative_to(ROOT)}:{fields['name']}" if named else f"{page.relative_to(ROOT)}#{i}",
                              page, i))
    return found


def is_whole(text: str) -> bool:
    return {"game", "time_control", "bots"} <= set(yaml.safe_load(text))


def test_the_docs_have_a_whole_tournament_example():
    assert any(is_whole(fenced(page.read_text())[i][1]) for _, page, i in yaml_examples())


@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("page, index", [(p, i) for _, p, i in yaml_examples()], ids=[n for n, _, _ in yaml_examples()])
def test_a_yaml_example_loads_and_whole_ones_run_beside_the_demos(page, index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # as written: nothing may depend on where the command is run from
    blocks = fenced(page.read_text())
    text = blocks[index][1]
    if is_whole(text):
        config = parse_config(text, path=ROOT / "tournaments" / "example.yaml")
        assert config.output.is_relative_to(ROOT), "the output is relative to the file, inside the project"
        summary = run_tournament(replace(config, output=tmp_path / "results"))
        assert summary.played == summary.total > 0
        assert not [r for r in summary.records if r.forfeit_by is not None], "the example's bots must play"
        return
    # the page's whole example, else the tournaments page's
    whole = [body for lang, body in blocks + fenced((ROOT / "docs" / "tournaments.md").read_text()) if lang == "yaml" and is_whole(body)]
    base = whole[0]
    fragment = yaml.safe_load(text.replace(PLACEHOLDER, str(ROOT)))
    here = tmp_path / "tournaments"
    here.mkdir()
    suite = (fragment.get("openings") or {}).get("file")
    if suite:  # the page shows that file in the next plain block
        (here / suite).write_text(next(body for lang, body in blocks[index + 1:] if lang == ""))
    shipped = (fragment.get("ray") or {}).get("working_dir")
    if shipped:  # the directory the page ships to a cluster's nodes: the reader has one
        (here / shipped).mkdir()
    if "python_wheels" in fragment:  # the folder of wheels the page installs from: the reader has one
        (here / fragment["python_wheels"]).mkdir()
    merged = {**yaml.safe_load(base), **fragment}
    submissions = merged.get("bots_from")
    if submissions:  # the whole example's teams, as the repository has them beside it
        (here / submissions).parent.mkdir(parents=True, exist_ok=True)
        (here / submissions).symlink_to(ROOT / "tournaments" / submissions)
    if len(fragment.get("bots", [])) < 2:  # a bot entry shown alone joins the others
        merged["bots"] = yaml.safe_load(base)["bots"] + fragment.get("bots", [])
    config = parse_config(yaml.safe_dump(merged, sort_keys=False), path=here / "example.yaml")
    assert config != parse_config(base, path=here / "example.yaml"), "the fragment's keys are read"
