"""docs/design.md names modules and functions: each must exist, so the map
cannot drift from the code unnoticed."""

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"


def named(text: str) -> list[tuple[str, str | None]]:
    """Every `path.py` and `path.py:name` (a dotted name: a class's method) in backticks."""
    return [(path, name or None) for path, name in re.findall(r"`((?:arena|engine)/[\w/]+\.py)(?::([\w.]+))?`", text)]


def test_every_module_and_function_the_design_page_names_exists():
    found = named(DESIGN.read_text())
    assert len(found) > 40 and sum(name is not None for _, name in found) > 25
    for path, name in found:
        assert (ROOT / path).is_file(), path
        if name is None:
            continue
        module = importlib.import_module(path[:-3].replace("/", ".").removesuffix(".__init__"))
        value = module
        for part in name.split("."):
            assert hasattr(value, part), f"{path}:{name}"
            value = getattr(value, part)


def test_the_check_sees_a_name_that_does_not_exist():
    assert named("`arena/run/tournament.py:run_tournament` and `arena/bot/gone.py`") == [
        ("arena/run/tournament.py", "run_tournament"), ("arena/bot/gone.py", None)]


def test_every_folder_of_the_arena_is_on_the_map():
    text = DESIGN.read_text()
    folders = {p.name for p in (ROOT / "arena").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {f for f in folders if f"`arena/{f}/`" not in text} == set()
