"""The Python environments of a tournament, installed before any bot starts:
the organiser's ``python_packages`` for every bot, and under
``team_packages: allow`` each submission's own ``requirements.txt`` for
that team (:mod:`arena.bot.packages` installs them and keeps them).

:func:`with_environments` gives each bot the environments it imports from.
The tournament's failing to install stops everything (one line naming the
package and the cause); a team's failing is that team's bot that cannot
start, as a broken manifest is: under ``startup_failures: forfeit`` the
others play on."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from arena.bot.packages import (
    Environment, MAX_REQUIREMENTS_BYTES, PackageList, PackagesProblem, build_environment, built_environment,
    list_problem, requirements_of,
)
from arena.bot.spec import BotConfig
from arena.bot.submission import SubmissionProblem, read_folder_file
from arena.bot.text import safe
from arena.run.config import ConfigError, TournamentConfig

__all__ = ["REQUIREMENTS", "TeamPackages", "with_environments"]

#: A team's list of packages, in its submission's folder.
REQUIREMENTS = "requirements.txt"


@dataclass(frozen=True)
class TeamPackages:
    """What became of one team's ``requirements.txt``: ``summary`` one line
    (what was installed or reused, or why nothing was); ``output`` what pip
    printed; ``warning`` when the file is there but not installed."""

    summary: str
    output: str = ""
    warning: bool = False


def with_environments(config: TournamentConfig, *, build: bool) -> tuple[TournamentConfig, dict[str, TeamPackages]]:
    """``config`` whose bots carry the environments they import from, and
    what became of each submission's ``requirements.txt``, by bot.  With
    ``build`` an environment not installed yet is installed now; without,
    it is a problem saying how to install it.  Raises :class:`ConfigError`
    when the tournament's packages are not (or cannot be) installed."""
    shared: tuple[Path, ...] = ()
    if config.python_packages:
        packages = PackageList(config.python_packages, "python_packages", config.python_wheels)
        try:
            environment = _environment(packages, build, config)
        except PackagesProblem as exc:
            raise ConfigError(str(exc).removeprefix("python_packages: "), file=_file(config), key="python_packages") from None
        shared = (environment.site,)
    bots, teams = [], {}
    for bot in config.bots:
        team = _team(bot, config, build) if bot.source is not None and bot.problem is None else None
        if team is not None:
            own, teams[bot.name] = team
            bot = replace(bot, problem=bot.problem or own) if isinstance(own, str) else replace(bot, python_envs=own)
        bots.append(replace(bot, python_envs=bot.python_envs + shared))
    return replace(config, bots=tuple(bots)), teams


def _team(bot: BotConfig, config: TournamentConfig, build: bool) -> tuple[tuple[Path, ...] | str, TeamPackages] | None:
    """A submission's own environment (or why it cannot start) and what
    became of its ``requirements.txt``; None when it has none."""
    assert bot.source is not None
    path = bot.cwd / REQUIREMENTS
    shown = safe(f"{bot.source.name}/{REQUIREMENTS}", limit=None)
    try:
        text = read_folder_file(path, MAX_REQUIREMENTS_BYTES, "a requirements file", f"{MAX_REQUIREMENTS_BYTES // 1024} KB")
    except SubmissionProblem as exc:
        return f"{shown}: {exc}", TeamPackages(f"{shown}: {exc}")
    if text is None:
        return None
    if config.team_packages != "allow":
        return (), TeamPackages(f"holds a {REQUIREMENTS}, which is not installed (team_packages: deny): its imports "
                                "of those packages will fail", warning=True)
    problem = list_problem(text)
    if problem is not None:
        line = f"{shown} line {problem[0]}: {problem[1]}"
        return line, TeamPackages(line)
    packages = PackageList(requirements_of(text), shown, config.python_wheels, strict=True)
    try:
        environment = _environment(packages, build, config)
    except PackagesProblem as exc:
        return str(exc), TeamPackages(str(exc), exc.output)
    return (environment.site,), TeamPackages(f"{shown}: {environment.summary()}", environment.output)


def _environment(packages: PackageList, build: bool, config: TournamentConfig) -> Environment:
    if build:
        return build_environment(packages)
    found = built_environment(packages)
    if found is None:
        raise PackagesProblem(f"{packages.source}: not installed yet; arena check --build {_file(config) or 'FILE'} "
                              "(or arena run) installs it")
    return found


def _file(config: TournamentConfig) -> str:
    return str(config.path) if config.path is not None else ""
