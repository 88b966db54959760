"""The house's plan: arena/ is grouped by layer and imports run one way.

A module may import its own layer, the layers below it and ``engine/``;
``engine/`` imports nothing of the arena or the bots.  The test reads every
import statement (those inside functions too), so an upward import fails
here before it tangles the house.
"""

from __future__ import annotations

import ast
from pathlib import Path
from builders import ROOT


#: Lowest first.  The live web view reads results as the commands do (through
#: arena.run's reading of a directory or tournament file); the front ends
#: (cli, check, play) sit above every layer.
LAYERS = ["engine", "arena.base", "arena.bot", "arena.game", "arena.formats", "arena.results", "arena.run", "arena.live", "arena"]


def layer_of(module: str) -> int | None:
    """The rank of the layer ``module`` belongs to, or None for a module outside the project."""
    if module == "engine" or module.startswith("engine."):
        return 0
    if module == "bots" or module.startswith("bots."):
        return len(LAYERS)  # above everything: nothing in engine/ or arena/ may import a bot
    if module == "arena" or module.startswith("arena."):
        for rank in range(len(LAYERS) - 2, 0, -1):
            if module == LAYERS[rank] or module.startswith(LAYERS[rank] + "."):
                return rank
        return len(LAYERS) - 1
    return None


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, package: str = "") -> list[tuple[int, str]]:
    """(line, module) for every import in ``path``, a module of ``package``:
    ``from a.b import c`` counts as ``a.b.c`` when ``c`` is a module, as
    ``a.b`` otherwise; a relative import is resolved against ``package``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                is_module = (ROOT / candidate.replace(".", "/")).with_suffix(".py").is_file() or (ROOT / candidate.replace(".", "/")).is_dir()
                found.append((node.lineno, candidate if is_module else module))
    return found


def upward_imports(root: Path = ROOT) -> list[str]:
    wrong = []
    for path in sorted([*root.glob("engine/**/*.py"), *root.glob("arena/**/*.py")]):
        name = module_name(path, root)
        own = layer_of(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for line, module in imports_of(path, package):
            rank = layer_of(module)
            if rank is not None and rank > own:
                wrong.append(f"{path.relative_to(root)}:{line} ({module_name(path, root)}) imports {module}")
    return wrong


def test_the_layers_exist_as_packages():
    for layer in LAYERS[1:-1]:
        assert (ROOT / layer.replace(".", "/") / "__init__.py").is_file(), layer
    flat = sorted(p.name for p in (ROOT / "arena").glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "check.py", "cli.py", "connect.py", "play.py", "progress.py"], flat


def test_imports_run_one_way():
    assert upward_imports() == []


#: The one module that opens ``tournament.json``: every other reads and writes
#: it through the typed record there.
META_MODULE = "arena/results/meta.py"


def tournament_json_openers(root: Path = ROOT) -> list[str]:
    """Modules of the arena, other than :data:`META_MODULE`, that name the
    file ``tournament.json`` in code (a string constant outside a docstring):
    each would open it by itself."""
    found = []
    for path in sorted(root.glob("arena/**/*.py")):
        if path.relative_to(root).as_posix() == META_MODULE:
            continue
        text = path.read_text()
        if "tournament.json" not in text:
            continue  # (parsing only the files that name it: the whole tree takes seconds)
        tree = ast.parse(text, str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "tournament.json" in node.value \
                    and id(node) not in docstrings:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_only_the_meta_record_opens_tournament_json():
    assert tournament_json_openers() == []


def test_the_tournament_json_check_can_fail(tmp_path):
    (tmp_path / "arena" / "results").mkdir(parents=True)
    (tmp_path / "arena" / "results" / "meta.py").write_text('META_FILE = "tournament.json"\n')
    (tmp_path / "arena" / "results" / "report.py").write_text(
        '"""Reads tournament.json through the meta record."""\nimport json\n'
        'def f(d):\n    return json.loads((d / "tournament.json").read_text())\n')
    assert tournament_json_openers(tmp_path) == ["arena/results/report.py:4"]


def test_the_checker_sees_an_upward_import(tmp_path):
    # The checker itself must be able to fail: a bot-layer module importing the run layer.
    assert layer_of("arena.bot.player") < layer_of("arena.run.config")
    assert layer_of("arena.cli") > layer_of("arena.run.config") > layer_of("arena.results.store")
    assert layer_of("engine.oxono") < layer_of("arena.bot.protocol")
    assert layer_of("bots.greedy") > layer_of("arena.cli")
    (tmp_path / "arena" / "bot").mkdir(parents=True)
    (tmp_path / "arena" / "bot" / "probe.py").write_text(
        "def f():\n    from arena.run.config import load_config\n    from ..run import config\n")
    (tmp_path / "arena" / "run").mkdir()
    (tmp_path / "arena" / "run" / "fine.py").write_text("from arena.bot import protocol\nimport engine\n")
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "rules.py").write_text("import arena.cli\n")
    assert upward_imports(tmp_path) == [
        "arena/bot/probe.py:2 (arena.bot.probe) imports arena.run.config",
        "arena/bot/probe.py:3 (arena.bot.probe) imports arena.run.config",
        "engine/rules.py:1 (engine.rules) imports arena.cli",
    ]


def test_the_readme_layout_names_every_module_in_its_layer():
    readme = (ROOT / "README.md").read_text()
    rows = {line.split("`")[1]: line for line in readme.splitlines() if line.startswith("| `arena/")}
    for layer in LAYERS[1:-1]:
        folder = layer.replace(".", "/") + "/"
        assert folder in rows, f"README's layout has no row for {folder}"
        modules = {p.stem for p in (ROOT / folder).glob("*.py")} - {"__init__"}
        missing = [m for m in sorted(modules) if f"`{m}`" not in rows[folder]]
        assert missing == [], f"README's row for {folder} does not name {missing}"
    front = {p.stem for p in (ROOT / "arena").glob("*.py")} - {"__init__", "__main__"}
    assert all(f"`{m}.py`" in rows["arena/"] for m in front), rows["arena/"]


def test_every_package_is_installed_by_a_non_editable_install():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {module_name(path.parent) for path in [*ROOT.glob("arena/**/__init__.py"), *ROOT.glob("engine/__init__.py"),
                                                   *ROOT.glob("bots/__init__.py")]}
    assert found - listed == set(), "pyproject.toml's packages miss these: a wheel would lack them"
