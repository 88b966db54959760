"""A Python bot imports the packages the organiser lists (``python_packages``)
or its team's own ``requirements.txt`` (``team_packages: allow``),
sandboxed or not, from an environment installed once with pip, offline from
a folder of wheels; a failed install is one line naming the package.

Every install here takes a wheel built by hand in the test, so no test
needs the network."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

import needs
from arena.bot import packages
from arena.bot.packages import PackageList, PackagesProblem, build_environment, built_environment, environment_key
from arena.run.config import ConfigError, load_config, parse_config
from arena.run.environments import with_environments
from builders import ROOT, arena, fenced

#: A bot that plays only when it can import the package of the wheel below.
BOT = """\
import runpy, sys
try:
    import tinypkg
except ImportError as exc:
    sys.exit(f"cannot play: {exc}")
assert tinypkg.VALUE == 42
runpy.run_module("bots.random_bot", run_name="__main__")
"""


def wheel(folder: Path, name: str = "tinypkg", version: str = "1.0") -> Path:
    """``folder/<name>-<version>-py3-none-any.whl``: a package whose ``VALUE`` is 42, zipped by hand as pip writes one."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}\n" for path, text in files.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name_in, text in {**files, f"{info}/RECORD": record}.items():
            archive.writestr(name_in, text)
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache of the test's own, so that every test installs afresh."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOTEM_ARENA_CACHE", str(folder))
    return folder


def sandboxed(mode: str) -> str:
    if mode == "bwrap":
        needs.bwrap()
    return mode


def league(tmp_path: Path, top: str, *, sandbox: str, team_requirements: str | None = None) -> Path:
    """``tmp_path/t.yaml``: the packaged bot (from ``bots:``, or with
    ``team_requirements`` a team folder with that ``requirements.txt``)
    against the random bot, the wheels in ``tmp_path/wheels``."""
    wheel(tmp_path / "wheels")
    (tmp_path / "bot.py").write_text(BOT)
    lines = [f"name: t\ngame: oxono\ntime_control: 10+0.1\nsandbox: {sandbox}\npython_wheels: wheels\n{top}"]
    if team_requirements is not None:
        team = tmp_path / "teams" / "team-a"
        team.mkdir(parents=True)
        (team / "bot.py").write_text(BOT)
        (team / "bot.yaml").write_text("cmd: python bot.py\n")
        (team / "requirements.txt").write_text(team_requirements)
        lines.append("bots_from: teams\n")
    lines.append(f"bots:\n  - {{name: other, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n")
    if team_requirements is None:
        lines.append("  - {name: packaged, cmd: python bot.py}\n")
    path = tmp_path / "t.yaml"
    path.write_text("".join(lines))
    return path


def rows(path: Path, *args: str) -> dict[str, dict]:
    ran = arena("check", path, "-n", "2", "-f", "json", *args)
    assert ran.exit_code in (0, 1), ran.out + ran.err
    return {row["bot"]: row for row in json.loads(ran.out)}


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_python_bot_imports_the_packages_the_tournament_lists(mode, tmp_path, cache):
    path = league(tmp_path, "python_packages: [tinypkg==1.0]\n", sandbox=sandboxed(mode))
    assert rows(path, "--build")["packaged"]["passed"] is True
    path.write_text(path.read_text().replace("python_packages: [tinypkg==1.0]\n", ""))
    refused = rows(path)["packaged"]
    assert not refused["passed"] and "No module named 'tinypkg'" in refused["reason"]


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_team_imports_its_own_requirements_when_the_organiser_allows_them(mode, tmp_path, cache):
    path = league(tmp_path, "team_packages: allow\n", sandbox=sandboxed(mode), team_requirements="tinypkg==1.0  # ours\n")
    assert rows(path)["team-a"]["reason"] == (f"did not start: team-a/requirements.txt: not installed yet; arena check "
                                              f"--build {path} (or arena run) installs it")
    team = rows(path, "--build")["team-a"]
    assert team["passed"] is True, team["reason"]
    assert team["packages"].startswith("team-a/requirements.txt: installed tinypkg 1.0 in ")
    assert "Successfully installed tinypkg-1.0" in team["packages_output"]
    again = rows(path, "--build")["team-a"]
    assert again["passed"] and again["packages"] == "team-a/requirements.txt: reused tinypkg 1.0"


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_teams_requirements_are_refused_unless_allowed_with_a_warning(mode, tmp_path, cache):
    path = league(tmp_path, "", sandbox=sandboxed(mode), team_requirements="tinypkg==1.0\n")
    team = rows(path, "--build")["team-a"]
    assert not team["passed"] and "No module named 'tinypkg'" in team["reason"]
    assert team["warnings"] == ["holds a requirements.txt, which is not installed (team_packages: deny): it "
                                "imports only what the tournament provides"]
    assert not (cache / "packages").exists()


def test_a_teams_line_that_is_not_a_package_is_refused_before_pip_runs(tmp_path, cache):
    path = league(tmp_path, "team_packages: allow\n", sandbox="none", team_requirements="tinypkg\n-e ../other\n")
    team = rows(path, "--build")["team-a"]
    assert team["reason"].startswith("did not start: team-a/requirements.txt line 2: '-e ../other' is not a package")
    assert not (cache / "packages").exists()


@pytest.mark.parametrize("line", ['six ; ${SECRET} == "x"', 'six ; python_version == "${SECRET}"', "six @ file:///etc"])
def test_a_teams_line_that_pip_would_expand_from_the_arenas_environment_is_refused(line):
    # (pip expands ${VAR} in a requirement: a team would read the organiser's variables in its install's output)
    from arena.bot.packages import requirement_problem

    assert requirement_problem(line) is not None
    assert requirement_problem('six ; python_version >= "3.8" and sys_platform == "linux"') is None


def test_an_install_is_reused_and_pip_is_not_run_again(tmp_path, cache, monkeypatch):
    wanted = PackageList(("tinypkg==1.0",), "python_packages", wheel(tmp_path / "wheels").parent)
    first = build_environment(wanted)
    assert (first.reused, first.installed) == (False, ("tinypkg 1.0",))
    assert (first.site / "tinypkg" / "__init__.py").is_file()

    def no_pip(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip ran again")

    monkeypatch.setattr(packages.subprocess, "run", no_pip)
    again = build_environment(wanted)
    assert (again.reused, again.site, again.installed) == (True, first.site, first.installed)
    assert "Successfully installed tinypkg-1.0" in again.output


def test_an_interrupted_install_is_never_used(tmp_path, cache):
    wanted = PackageList(("tinypkg==1.0",), "python_packages", wheel(tmp_path / "wheels").parent)
    half = cache / "packages" / f".{environment_key(wanted)}-x1" / "site" / "tinypkg"
    half.mkdir(parents=True)
    assert built_environment(wanted) is None
    built = build_environment(wanted)
    assert built.site == cache / "packages" / environment_key(wanted) / "site" and not built.reused


def test_the_install_never_writes_into_the_arenas_site_packages(tmp_path, cache, monkeypatch):
    ran: list[list[str]] = []
    real = subprocess.run

    def spy(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return real(argv, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(packages.subprocess, "run", spy)
    build_environment(PackageList(("tinypkg",), "python_packages", wheel(tmp_path / "wheels").parent))
    target = Path(ran[0][ran[0].index("--target") + 1])
    assert target.parent.parent == cache / "packages" and target.name == "site"


def test_a_package_pip_cannot_install_is_one_line_naming_it(tmp_path, cache):
    path = league(tmp_path, "python_packages: [tinypkg==9.9]\n", sandbox="none")
    ran = arena("check", path, "-n", "1", "--build")
    assert ran.exit_code == 2, ran.out + ran.err
    quoted = next(line for line in (ROOT / "docs" / "tournaments.md").read_text().splitlines()
                  if line.startswith("error: /srv/course/course.yaml: python_packages:"))
    assert ran.err.splitlines() == [quoted.replace("/srv/course/course.yaml", str(path)).replace(
        "/srv/course/wheels", str(tmp_path / "wheels")).replace("numpy==9.9", "tinypkg==9.9")]
    assert not any(p.name.startswith(".") for p in (cache / "packages").iterdir())


def test_a_package_that_fails_to_build_is_one_line_naming_it(tmp_path, cache):
    """A source package whose build fails, as pip prints it: its summary and the last line the build wrote."""
    source = tmp_path / "broken-1.0"
    source.mkdir()
    (source / "setup.py").write_text("raise SystemExit('this package does not build here')\n")
    (tmp_path / "wheels").mkdir()
    with tarfile.open(tmp_path / "wheels" / "broken-1.0.tar.gz", "w:gz") as archive:
        archive.add(source, "broken-1.0")
    with pytest.raises(PackagesProblem) as error:
        build_environment(PackageList(("broken==1.0",), "python_packages", tmp_path / "wheels"))
    assert str(error.value).startswith("python_packages: pip could not install broken-1.0.tar.gz: ")
    assert "did not run successfully (" in str(error.value) and "\n" not in str(error.value)
    assert "Processing" in error.value.output


def test_a_team_pip_cannot_serve_does_not_start_and_says_why(tmp_path, cache):
    path = league(tmp_path, "team_packages: allow\n", sandbox="none", team_requirements="nosuchpkg\n")
    team = rows(path, "--build")["team-a"]
    assert team["reason"] == ("did not start: team-a/requirements.txt: pip could not install nosuchpkg: no matching "
                              f"version among the wheels in {tmp_path / 'wheels'}")


def test_packages_not_installed_yet_refuse_a_check_without_build(tmp_path, cache):
    path = league(tmp_path, "python_packages: [tinypkg==1.0]\n", sandbox="none")
    ran = arena("check", path, "-n", "1")
    assert ran.exit_code == 2 and ran.err.splitlines() == [
        f"error: {path}: python_packages: not installed yet; arena check --build {path} (or arena run) installs it"]


def test_arena_run_installs_them_first(tmp_path, cache):
    path = league(tmp_path, "python_packages: [tinypkg==1.0]\nrounds: 1\noutput: out\n", sandbox="none")
    ran = arena("run", path)
    assert ran.exit_code == 0, ran.err
    assert ran.err.splitlines()[0].startswith("python_packages: installed tinypkg 1.0 in ")
    games = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert games and not any(game.get("forfeit_by") for game in games)
    path.write_text(path.read_text().replace("rounds: 1", "rounds: 2"))
    again = arena("run", path)
    assert again.exit_code == 0 and "python_packages" not in again.err, again.err


def test_a_second_look_installs_nothing_and_adds_no_environment_twice(tmp_path, cache):
    path = league(tmp_path, "python_packages: [tinypkg==1.0]\nteam_packages: allow\n", sandbox="none",
                  team_requirements="tinypkg==1.0\n")
    first = with_environments(load_config(path), build=True)
    assert len(first.installed_now()) == 2
    again = with_environments(first.config, build=True)
    assert again.installed_now() == [] and again.config == first.config
    team = first.config.bot("team-a")
    assert team.python_envs == (first.teams["team-a"].environment.site, first.shared.site)


def test_a_teams_requirements_file_that_is_a_link_is_refused(tmp_path, cache):
    path = league(tmp_path, "team_packages: allow\n", sandbox="none", team_requirements="tinypkg\n")
    listed = tmp_path / "teams" / "team-a" / "requirements.txt"
    listed.rename(listed.with_name("mine.txt"))
    listed.symlink_to("mine.txt")  # within its folder, which a submission may hold; not as its list
    team = with_environments(load_config(path), build=True).teams["team-a"]
    assert team.problem == ("team-a/requirements.txt: it cannot be read: a link; a requirements file is a file of "
                            "the folder's own")


@pytest.mark.parametrize("setting, message", [
    ("python_packages: ['-r other.txt']", "t.yaml:1: python_packages[0]: '-r other.txt' is not a package by name"),
    ("python_packages: [3]", "t.yaml:1: python_packages[0]: must be a package such as numpy==2.1.*, got integer '3'"),
    ("python_packages: {numpy: 2}", "t.yaml:1: python_packages: must be a list such as [numpy==2.1.*] or the path"),
    ("python_packages: missing.txt", "t.yaml:1: python_packages: cannot read the requirements file"),
    ("python_wheels: nowhere", "t.yaml:1: python_wheels: no such folder: "),
    ("team_packages: yes", "t.yaml:1: team_packages: unknown value True; use one of: deny, allow"),
])
def test_a_bad_setting_names_its_key_and_line(setting, message, tmp_path):
    text = f"{setting}\ngame: oxono\ntime_control: 5\nbots:\n  - {{name: a, cmd: x}}\n  - {{name: b, cmd: x}}\n"
    with pytest.raises(ConfigError) as error:
        parse_config(text, path=tmp_path / "t.yaml")
    assert str(error.value).startswith(f"{tmp_path}/{message}")


def test_a_requirements_file_is_read_relative_to_the_tournament_file(tmp_path):
    (tmp_path / "needs.txt").write_text("# the course's\nnumpy==2.1.*   # arrays\n\nscipy>=1.13\n")
    text = "python_packages: needs.txt\ngame: oxono\ntime_control: 5\nbots:\n  - {name: a, cmd: x}\n  - {name: b, cmd: x}\n"
    assert parse_config(text, path=tmp_path / "t.yaml").python_packages == ("numpy==2.1.*", "scipy>=1.13")
    (tmp_path / "needs.txt").write_text("numpy\nhttps://example.com/x.whl\n")
    with pytest.raises(ConfigError) as error:
        parse_config(text, path=tmp_path / "t.yaml")
    assert str(error.value).startswith(f"{tmp_path / 'needs.txt'}:2: 'https://example.com/x.whl' is not a package")


def test_the_same_python_path_sandboxed_or_not(tmp_path):
    """Outside the sandbox a bot running the arena's Python gets its
    environments and the arena's packages on PYTHONPATH, as inside."""
    from arena.bot.sandbox import Confinement, python_path

    site = tmp_path / "site"
    found = python_path([sys.executable, "bot.py"], tmp_path, {"PYTHONPATH": "mine"},
                        Confinement(python_envs=(site,)))
    assert found == f"{site}:{ROOT}:mine"
    assert python_path(["/bin/sh", "bot.sh"], tmp_path, {}, Confinement(python_envs=(site,))) is None


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_the_interpreter_the_arenas_resolves_to_imports_the_engine_sandboxed_or_not(mode, tmp_path):
    """``/usr/bin/python3.x``, which a virtualenv's ``python`` links to, has
    none of the virtualenv's packages: the arena's ``engine`` and ``bots``
    reach it through PYTHONPATH outside the sandbox as inside."""
    interpreter = os.path.realpath(sys.executable)
    ran = arena("check", f"{interpreter} -m bots.random_bot", "--cwd", tmp_path, "--sandbox", sandboxed(mode), "-n", "1")
    assert ran.exit_code == 0 and "all checks passed" in ran.out, ran.out + ran.err


def test_a_bot_importing_a_package_not_provided_is_named_as_the_bots_page_says(tmp_path):
    (tmp_path / "bot.py").write_text("import tinypkg\n")
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 5+0.1\noutput: out\nbots:\n"
                    f"  - {{name: other, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n  - {{name: mine, cmd: python bot.py}}\n")
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    quoted = next(line for line in (ROOT / "docs" / "bots.md").read_text().splitlines()
                  if line.startswith("error: bot 'mine' did not start"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [quoted.replace("/home/me/mine", str(tmp_path)).replace("scipy", "tinypkg")]


@pytest.mark.parametrize("page, section", [("tournaments.md", "### Python packages"),
                                           ("league.md", "### Packages the teams may import")])
def test_a_pages_example_installs_offline_and_its_bot_imports_every_package(page, section, tmp_path, cache):
    """The docs' example, as written, with a wheel in its folder for each
    package it lists (a stand-in of the version it names)."""
    text = (ROOT / "docs" / page).read_text()
    example = next(body for lang, body in fenced(text.partition(section)[2]) if lang == "yaml")
    settings = yaml.safe_load(example)
    modules = []
    for requirement in settings["python_packages"]:
        name, version = re.fullmatch(r"([\w-]+)\W+([\d.*]+)", requirement).groups()
        wheel(tmp_path / settings["python_wheels"], name, version.replace("*", "0"))
        modules.append(name)
    (tmp_path / "bot.py").write_text(f"import {', '.join(modules)}\n" + BOT.replace("tinypkg", modules[0]))
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 10+0.1\n{example}bots:\n"
                    f"  - {{name: other, cmd: python -m bots.random_bot, cwd: {ROOT}}}\n  - {{name: packaged, cmd: python bot.py}}\n")
    found = rows(path, "--build")["packaged"]
    assert found["passed"] is True, found["reason"]
