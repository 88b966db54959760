"""Sandboxed Python bots import the arena's ``engine`` and ``bots`` however
the arena is installed (a checkout, as ``pip install -e .`` leaves it; a
non-editable install), and see nothing else of the checkout; a bot whose
program was never built says so in one line, sandboxed or not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import needs
from arena.bot import sandbox
from arena.bot.process import BotProcess, StartError
from arena.bot.sandbox import Confinement
from builders import ROOT

#: What a non-editable install is built from (pyproject.toml's packages and readme).
_SOURCES = ("pyproject.toml", "README.md", "arena", "engine", "bots")


@pytest.fixture(scope="session")
def installed_arena(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project installed, not editable, into a folder of its own: built
    from a copy of the sources so that the build leaves nothing in the checkout."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    source.mkdir()
    for name in _SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    target = base / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return target


def _sandboxed_check(arena_path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena check "python -m bots.greedy" --sandbox bwrap`` run from ``cwd``
    by the arena found on ``arena_path``, ``python`` being the arena's own."""
    env = {**os.environ, "PYTHONPATH": str(arena_path), "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', os.defpath)}"}
    return subprocess.run([sys.executable, "-m", "arena", "check", "python -m bots.greedy", "--sandbox", "bwrap", "-n", "1"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("install", ["checkout", "non-editable"])
def test_a_sandboxed_python_bot_imports_the_engine_from_outside_the_clone(install, tmp_path, request):
    needs.bwrap()
    arena_path = ROOT if install == "checkout" else request.getfixturevalue("installed_arena")
    done = _sandboxed_check(arena_path, tmp_path)
    assert done.returncode == 0 and "all checks passed" in done.stdout, done.stdout + done.stderr
    assert "ModuleNotFoundError" not in done.stdout


def test_the_sandbox_shows_of_the_checkout_only_engine_and_bots(tmp_path):
    needs.bwrap()
    argv = sandbox.bwrap_command([sys.executable, "-m", "bots.greedy"], tmp_path, {},
                                 Confinement(sandbox="bwrap", scratch_dir=tmp_path / "scratch"))
    binds = [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv) if word in ("--ro-bind", "--bind")]
    venv = Path(sys.prefix).resolve()
    from_checkout = {(Path(src), dst) for src, dst in binds
                     if Path(src).resolve().is_relative_to(ROOT) and not Path(src).resolve().is_relative_to(venv)}
    assert from_checkout == {(ROOT / "engine", "/arena-packages/engine"), (ROOT / "bots", "/arena-packages/bots")}
    assert argv[argv.index("--setenv") + 1:argv.index("--setenv") + 3] == ["PYTHONPATH", "/arena-packages"]


def test_a_bot_sees_neither_the_arena_nor_the_checkout_beside_the_engine(tmp_path):
    needs.bwrap()
    probe = (f"import importlib.util, json, os; print(json.dumps([importlib.util.find_spec('arena') is not None, "
             f"os.path.exists({str(ROOT / 'tournaments')!r}), importlib.util.find_spec('engine').origin]))")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = subprocess.run(sandbox.bwrap_command([sys.executable, "-c", probe], tmp_path, {},
                                                Confinement(sandbox="bwrap", scratch_dir=scratch)),
                          capture_output=True, text=True, timeout=60, env={"PATH": os.defpath})
    assert done.stdout.strip() == '[false, false, "/arena-packages/engine/__init__.py"]', done.stderr


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_program_missing_from_its_folder_is_not_built(mode, tmp_path, monkeypatch):
    if mode == "bwrap":
        needs.bwrap()
    folder = tmp_path / "submissions" / "team-x"
    folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    bot = BotProcess(["./bot"], cwd=folder, confinement=Confinement(sandbox=mode))
    with pytest.raises(StartError) as error:
        bot.start()
    assert str(error.value) == "./bot not found in submissions/team-x (not built?)"


def test_a_folder_named_bots_on_the_path_does_not_stand_in_for_the_arenas(tmp_path, monkeypatch):
    """``python -m arena`` run from a course folder that has a ``bots/`` of its
    own: the sandbox still shows the arena's packages."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sandbox._importable_dirs.cache_clear()
    try:
        assert sandbox._importable_dirs() == {"engine": str(ROOT / "engine"), "bots": str(ROOT / "bots")}
    finally:
        sandbox._importable_dirs.cache_clear()
