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
from arena.base.text import safe
from arena.run.config import ConfigError, TournamentConfig

__all__ = ["REQUIREMENTS", "Installs", "TeamPackages", "with_environments"]

#: A team's list of packages, in its submission's folder.
REQUIREMENTS = "requirements.txt"


@dataclass(frozen=True)
class TeamPackages:
    """What became of one team's ``requirements.txt``: ``summary`` one line
    (what was installed or reused, or why nothing was); ``output`` what pip
    printed; ``environment`` its environment, once installed; ``problem`` why
    the team cannot start; ``warning`` when the file is there but not installed."""

    summary: str
    output: str = ""
    environment: Environment | None = None
    problem: str | None = None
    warning: bool = False


@dataclass(frozen=True)
class Installs:
    """:func:`with_environments`' answer: the ``config`` whose bots carry
    their environments, the tournament's ``shared`` environment (None
    without ``python_packages``) and what became of each team's list, by bot."""

    config: TournamentConfig
    shared: Environment | None
    teams: dict[str, TeamPackages]

    def installed_now(self) -> list[str]:
        """A line for each environment installed by this call (not reused)."""
        lines = [f"python_packages: {self.shared.summary()}"] if self.shared is not None and not self.shared.reused else []
        return lines + [team.summary for team in self.teams.values()
                        if team.environment is not None and not team.environment.reused]


def with_environments(config: TournamentConfig, *, build: bool) -> Installs:
    """``config`` whose bots carry the environments they import from, and
    what became of each submission's ``requirements.txt``.  With ``build``
    an environment not installed yet is installed now; without, it is a
    problem saying how to install it.  A bot that already cannot start is
    left as it is, so a second call installs nothing again.  Raises
    :class:`ConfigError` when the tournament's packages are not (or cannot
    be) installed."""
    shared = None
    if config.python_packages:
        packages = PackageList(config.python_packages, "python_packages", config.python_wheels)
        try:
            shared = _environment(packages, build, config)
        except PackagesProblem as exc:
            raise ConfigError(str(exc).removeprefix("python_packages: "), file=_file(config), key="python_packages") from None
    bots, teams = [], {}
    for bot in config.bots:
        team = _team(bot, config, build) if bot.source is not None and bot.problem is None else None
        own: tuple[Path, ...] = ()
        if team is not None:
            teams[bot.name] = team
            own = (team.environment.site,) if team.environment is not None else ()
            bot = replace(bot, problem=team.problem)
        bots.append(replace(bot, python_envs=own + ((shared.site,) if shared is not None else ())))
    return Installs(replace(config, bots=tuple(bots)), shared, teams)


def _team(bot: BotConfig, config: TournamentConfig, build: bool) -> TeamPackages | None:
    """What becomes of a submission's ``requirements.txt``; None when it has none."""
    assert bot.source is not None
    path = bot.cwd / REQUIREMENTS
    shown = safe(f"{bot.source.name}/{REQUIREMENTS}", limit=None)
    try:
        text = read_folder_file(path, MAX_REQUIREMENTS_BYTES, "a requirements file", f"{MAX_REQUIREMENTS_BYTES // 1024} KB")
    except SubmissionProblem as exc:
        return _refused(f"{shown}: {exc}")
    if text is None:
        return None
    if config.team_packages != "allow":
        return TeamPackages(f"holds a {REQUIREMENTS}, which is not installed (team_packages: deny): it imports "
                            "only what the tournament provides", warning=True)
    problem = list_problem(text)
    if problem is not None:
        return _refused(f"{shown} line {problem[0]}: {problem[1]}")
    packages = PackageList(requirements_of(text), shown, config.python_wheels, strict=True)
    try:
        environment = _environment(packages, build, config)
    except PackagesProblem as exc:
        return _refused(str(exc), exc.output)
    return TeamPackages(f"{shown}: {environment.summary()}", environment.output, environment)


def _refused(problem: str, output: str = "") -> TeamPackages:
    return TeamPackages(problem, output, problem=problem)


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
