"""Tournament files: read and validate the YAML into frozen, typed objects.

Every mistake is refused before anything runs, with a one-line message that
names the file, the line and the key (``demo.yaml:7: bots[1].name: duplicate
bot name 'greedy'``).  Nothing downstream of this module sees raw YAML.

This module is the schema, one function a section, on the typed readers of
:mod:`arena.run.yaml_reader`.  The sections ``arena match`` also takes as
options, ``sprt:`` and ``openings:``, have one parser each that reads either
form (:class:`Section`; the command line's is :mod:`arena.run.option_reader`).

    >>> config = parse_config('''
    ... name: example
    ... game: oxono
    ... time_control: 5+0.1
    ... bots:
    ...   - {name: a, cmd: python -m bots.random_bot}
    ...   - {name: b, cmd: python -m bots.greedy}
    ... ''', base_dir=Path("/tmp"))
    >>> [bot.name for bot in config.bots], str(config.time_control), config.competition.rounds
    (['a', 'b'], '5+0.1', 1)
"""

from __future__ import annotations

import glob
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import engine
from arena.bot.limits import LIMIT_KEYS, Limits
from arena.bot.packages import MAX_REQUIREMENTS_BYTES, list_problem, requirement_problem, requirements_of
from arena.bot.sandbox import SANDBOXES, SandboxUnavailable, check_sandbox
from arena.bot.spec import STARTUP_TIMEOUT_S, BotConfig, command_problem, split_command
from arena.bot.submission import (
    SUBMISSION_KEYS, SubmissionLimits, SubmissionProblem, deadline_of, folder_entries, outside_word, read_manifest,
)
from arena.base.text import safe
from arena.game.clock import MARGIN_MS, TimeControl, parse_time_control
from arena.game.openings import Opening, OpeningError, load_suite, random_suite
from arena.formats.competition import FORMATS, RANKINGS, SEEDS, STAGED, Competition, Rules
from arena.formats.stages import BYE_SCORES, STAGE_FORMATS, Stage, stage_problem
from arena.results.sprt import SPRT_MODELS, SprtConfig
from arena.run.option_reader import OptionMapping
from arena.run.remote_settings import REMOTE_KEYS, RemoteSettings, remote_link, remote_settings
from arena.run.yaml_reader import ConfigError, YamlMapping, YamlValue, kind_of, read_yaml

__all__ = [
    "BOT_KEYS",
    "EXECUTORS",
    "FORMATS",
    "STAGED",
    "STAGE_KEYS",
    "RAY_KEYS",
    "TOURNAMENT_KEYS",
    "OPENINGS_KEYS",
    "SPRT_KEYS",
    "check_programs",
    "ConfigError",
    "STARTUP_FAILURES",
    "TEAM_PACKAGES",
    "RaySettings",
    "Section",
    "TournamentConfig",
    "load_config",
    "openings_from_option",
    "openings_section",
    "parse_config",
    "sprt_from_option",
    "sprt_section",
    "with_executor",
]

#: Every key a tournament file may hold at its top level.
TOURNAMENT_KEYS = (
    "name",
    "description",
    "game",
    "time_control",
    "rounds",
    "format",
    "concurrency",
    "seed",
    "output",
    "time_margin",
    "startup_timeout",
    "openings",
    "sprt",
    "limits",
    "sandbox",
    "submission_limits",
    "startup_failures",
    "report",
    "executor",
    "ray",
    "reference",
    "ranking",
    "withdraw_after_crashes",
    "withdrawn",
    "disqualified",
    "bye",
    "games_per_match",
    "tiebreak_pairs",
    "seed_from",
    "seeding",
    "settle",
    "max_games",
    "stages",
    "python_packages",
    "python_wheels",
    "team_packages",
    "bots_from",
    "bots",
    *REMOTE_KEYS,
)
#: Every key a bot entry may hold.
BOT_KEYS = ("name", "cmd", "options", "cwd", "env", "limits", "sandbox", "version", "time_control", "debug", "remote")
#: A submission's manifest (``bots_from``): the file in each folder, and its keys.
MANIFEST = "bot.yaml"
MANIFEST_KEYS = ("name", "cmd", "options", "env", "version")
#: The keys of ``openings:`` (either ``file`` or ``plies``/``count``) and of ``sprt:``.
OPENINGS_KEYS = ("plies", "count", "file")
SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
#: Every key a stage of ``stages:`` may hold.
STAGE_KEYS = ("format", "rounds", "top", "games_per_match", "tiebreak_pairs", "bye", "settle", "max_games")
#: The keys of an adaptive stage's ``settle:``.
SETTLE_KEYS = ("confidence", "within_elo", "top")
#: The values of ``seeding:``: the first stage's seeding is the file's order
#: (``bots:`` then ``bots_from:``'s folders by name), drawn from the seed, or
#: the ranking of ``seed_from:``.
SEEDINGS = ("file", "random", "seed_from")
#: What a bot that fails the pre-flight does: stop the run, or forfeit its games.
STARTUP_FAILURES = ("stop", "forfeit")
#: A tournament file's size: a small input must not cost a lot (for what its
#: aliases may expand to, see :mod:`arena.run.yaml_reader`; for a command's,
#: :mod:`arena.bot.spec`).
MAX_FILE_BYTES = 1_000_000
#: Where games are played: this machine's cores, or a Ray cluster (:mod:`arena.run.ray_executor`).
EXECUTORS = ("local", "ray")
#: Whether a submission's own ``requirements.txt`` is installed for it (``team_packages``).
TEAM_PACKAGES = ("deny", "allow")
#: Every key the ``ray:`` mapping may hold.
RAY_KEYS = ("address", "working_dir", "num_cpus", "connect_timeout", "calibrate", "time_scaling")
#: What ``ray.time_scaling`` may say: the clock as the file gives it, or scaled by each node's speed.
TIME_SCALINGS = ("off", "speed")

_REQUIRED = ("game", "time_control")
_BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_DEFAULT_TIME_MARGIN_S = MARGIN_MS / 1000


@dataclass(frozen=True)
class RaySettings:
    """The ``ray:`` mapping, used when the executor is ``ray``.

    ``address`` is None to start a Ray instance on this machine; ``working_dir``
    (absolute) is shipped to every node; each actor reserves ``num_cpus``;
    connecting may take ``connect_timeout`` seconds.  ``calibrate``: each
    node's speed is measured before the first game, and under
    ``time_scaling`` ``speed`` a slower node's games get a longer clock (see
    :mod:`arena.run.node_conditions`).
    ``actors`` is the file's ``concurrency`` when it gives one, else None: as
    many actors as the cluster's CPUs hold."""

    address: str | None = None
    working_dir: Path | None = None
    num_cpus: float = 1.0
    actors: int | None = None
    #: Seconds the run waits for the cluster to take its connection.
    connect_timeout: float = 30.0
    calibrate: bool = False
    #: One of :data:`TIME_SCALINGS`.
    time_scaling: str = "off"


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file.  Paths are absolute."""

    name: str
    #: What decides the games and the ranking: the game, the seed, the
    #: format, its rounds, stages and openings, and the rules; its names are the bots'.
    competition: Competition
    time_control: TimeControl
    concurrency: int
    output: Path
    bots: tuple[BotConfig, ...]
    time_margin_ms: int
    startup_timeout_s: float
    path: Path | None
    description: str
    #: ``stop``: a bot that fails the pre-flight stops the run; ``forfeit``: it forfeits its games.
    startup_failures: str = "stop"
    #: Write ``report.html`` in the output directory, refreshed during the run.
    report: bool = False
    executor: str = "local"
    ray: RaySettings = RaySettings()
    #: The results directory whose ranking seeds the first stage; None: the file's order.
    seed_from: Path | None = None
    #: How the first stage is seeded, one of :data:`SEEDINGS`.
    seeding: str = "file"
    #: What the arena reads of each ``bots_from`` submission at the most.
    submission_limits: SubmissionLimits = SubmissionLimits()
    #: Time odds: the bots that play under a clock of their own (a bot's
    #: ``time_control``, ``--bot ...,tc=``), by name; the others play under
    #: ``time_control``.
    time_odds: Mapping[str, TimeControl] = field(default_factory=dict)
    #: ``python_packages``: the packages every bot running the arena's Python
    #: imports, installed into an environment of the tournament's own
    #: (:mod:`arena.run.environments`); empty: none.
    python_packages: tuple[str, ...] = ()
    #: ``python_wheels``: the folder of wheels installs take their packages
    #: from, offline; None: the package index.
    python_wheels: Path | None = None
    #: ``team_packages``: ``allow`` installs a submission's own
    #: ``requirements.txt`` for it; ``deny`` does not (a check warns of one).
    team_packages: str = "deny"
    #: The listener for the bots that play from another machine (``remote: true``).
    remote: RemoteSettings = RemoteSettings()

    def __post_init__(self) -> None:
        if self.competition.names != tuple(bot.name for bot in self.bots):
            # A programming error: the schedule would pair other bots than those that run.
            raise ValueError("TournamentConfig: the competition's names are not the bots' (see with_bots)")

    def with_bots(self, bots: Sequence[BotConfig]) -> TournamentConfig:
        """This config with ``bots`` playing (its competition naming them)."""
        bots = tuple(bots)
        return replace(self, bots=bots, competition=replace(self.competition, names=tuple(bot.name for bot in bots)))

    @property
    def remote_bots(self) -> tuple[str, ...]:
        """The bots that play from another machine, in the file's order."""
        return tuple(bot.name for bot in self.bots if bot.remote is not None)

    def clock_of(self, name: str) -> TimeControl:
        """The time control the bot ``name`` plays under."""
        return self.time_odds.get(name, self.time_control)

    def seat_controls(self, players: Sequence[str]) -> tuple[TimeControl, ...] | None:
        """Each seat's clock in a game of ``players``; None when both play under :attr:`time_control`."""
        if not any(name in self.time_odds for name in players):
            return None
        return tuple(self.clock_of(name) for name in players)

    def bot(self, name: str) -> BotConfig:
        """The bot called ``name``; ``KeyError`` when there is none."""
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(f"no bot named {name!r}; bots: {', '.join(b.name for b in self.bots)}")


def load_config(path: str | Path) -> TournamentConfig:
    """Read and validate the tournament file at ``path``; relative paths in it
    are relative to its directory.  Raises :class:`ConfigError`."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES and path.is_file():
            raise ConfigError(
                f"the file is {size / 1e6:.1f} MB; a tournament file may hold at most {MAX_FILE_BYTES // 1_000_000} MB",
                file=str(path),
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such file", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror or exc}", file=str(path)) from None
    return parse_config(text, path=path)


def parse_config(text: str, *, path: Path | None = None, base_dir: Path | None = None) -> TournamentConfig:
    """Validate the YAML ``text`` of a tournament file.  ``path`` is the file it
    came from (named in errors; its stem is the default ``name``); relative
    paths are resolved against ``base_dir``, by default the file's directory or
    else the current directory.  Raises :class:`ConfigError`."""
    if base_dir is None:
        base_dir = path.parent if path is not None else Path.cwd()
    file = str(path) if path is not None else "<string>"
    root = read_yaml(text, file)
    if root is None:
        raise ConfigError("the file is empty; it needs at least game, time_control and bots", file=file)
    fields = root.mapping("a tournament file must be a mapping of keys (game:, time_control:, bots:, ...)")
    return _tournament(fields, path.resolve() if path is not None else None, base_dir.resolve())


def with_executor(config: TournamentConfig, executor: str | None, ray_address: str | None) -> TournamentConfig:
    """``config`` with the command line's choice of executor (``--executor``,
    ``--ray-address``, which implies ``ray``) in place of the file's."""
    if executor is not None and executor not in EXECUTORS:
        raise ConfigError(f"--executor: unknown value {executor!r}; use one of: {', '.join(EXECUTORS)}", file="")
    if ray_address is not None:
        if executor == "local":
            raise ConfigError("--ray-address runs on Ray: it cannot go with --executor local", file="")
        return replace(config, executor="ray", ray=replace(config.ray, address=ray_address.strip() or None))
    return config if executor is None else replace(config, executor=executor)


def with_debug(config: TournamentConfig, names: Sequence[str]) -> TournamentConfig:
    """``config`` with the protocol logged for the bots ``--debug`` names
    (each option one name or several with commas)."""
    wanted = {name.strip() for option in names for name in option.split(",") if name.strip()}
    known = {bot.name for bot in config.bots}
    unknown = sorted(wanted - known)
    if unknown:
        raise ConfigError(f"--debug: no bot named {unknown[0]!r}; bots: {', '.join(sorted(known))}", file="")
    return replace(config, bots=tuple(replace(bot, debug=True) if bot.name in wanted else bot for bot in config.bots))


def sprt_from_option(text: str) -> SprtConfig:
    """``--sprt elo0=0,elo1=5[,alpha=0.05,beta=0.05,model=normalized]``, read as ``sprt:`` is."""
    usage = f"elo0=0,elo1=5[,alpha=0.05,beta=0.05,model={'|'.join(SPRT_MODELS)}]"
    return sprt_section(OptionMapping("--sprt", text, label="SPRT setting", usage=usage))


def openings_from_option(text: str, game: str, seed: int) -> tuple[Opening, ...]:
    """``--openings plies=4,count=50`` (drawn from ``seed``) or ``--openings
    FILE``, read as ``openings:`` is; a file is relative to the current directory."""
    usage = "plies=4,count=50 or the path of a suite file"
    return openings_section(
        OptionMapping("--openings", text, label="setting", usage=usage, bare_key="file"), game, seed, Path.cwd()
    )


def check_programs(config: TournamentConfig) -> None:
    """Refuse a tournament whose bot programs cannot be found, before anything
    runs: a typo in a command would otherwise forfeit every game of that bot.
    See :func:`arena.bot.spec.command_problem`.  A bot to run under a
    sandbox this machine cannot run is refused too.  A submission from a
    folder (``bots_from``) that cannot start is refused only under
    ``startup_failures: stop``: otherwise it forfeits its games, and the
    other teams play on."""
    for number, bot in enumerate(config.bots):
        if bot.remote is not None:  # its program is on its author's machine
            continue
        if bot.source is not None:
            problem = bot.problem or command_problem(bot.cmd, bot.cwd, bot.env)
            if problem and config.startup_failures == "stop":
                # A manifest's problem names the manifest's path; a command's, the folder.
                where = "" if bot.problem else f" in {safe(str(bot.source), limit=None)}"
                raise ConfigError(f"bot {bot.name!r}{where}: {problem}", file="")
            continue
        key = "cmd"
        try:
            check_sandbox(bot.sandbox)
        except SandboxUnavailable as exc:
            problem, key = str(exc), "sandbox"
        else:
            problem = command_problem(bot.cmd, bot.cwd, bot.env)
        if not problem:
            continue
        if config.path is None:  # a match from the command line: no file to point into
            raise ConfigError(f"bot {bot.name!r}: {problem}", file="")
        raise ConfigError(f"bot {bot.name!r}: {problem}", file=str(config.path), key=f"bots[{number}].{key}")


# -- sections the command line shares ---------------------------------------------


class Section(Protocol):
    """What the parsers of ``sprt:`` and ``openings:`` read: a mapping of a
    tournament file (:class:`~arena.run.yaml_reader.YamlMapping`) or an
    option's ``key=value,...`` (:class:`~arena.run.option_reader.OptionMapping`),
    each wording its errors for its own form.  A reader given no default
    requires the key."""

    def __contains__(self, key: object) -> bool: ...
    def __iter__(self) -> Iterator[Any]: ...
    def allow(self, known: Sequence[str]) -> None: ...
    def require(self, *keys: str) -> None: ...
    def error(self, problem: str, key: str | None = None) -> ConfigError: ...
    def file_error(self, path: Path, line: int | None, problem: str) -> ConfigError: ...
    def integer(self, key: str, default: int | None = None) -> int: ...
    def number(self, key: str, default: float | None = None) -> float: ...
    def path(self, key: str, default: Path | None = None) -> Path: ...
    def choice(self, key: str, choices: Sequence[str]) -> str: ...


def sprt_section(section: Section) -> SprtConfig:
    """An SPRT: ``elo0`` and ``elo1``, and ``alpha``, ``beta`` and ``model``
    or else :class:`SprtConfig`'s defaults.  The ranges are :class:`SprtConfig`'s own
    checks, which settings read back from a results directory pass too."""
    section.allow(SPRT_KEYS)
    values: dict[str, Any] = {key: section.number(key) for key in section if key != "model"}
    values["model"] = section.choice("model", SPRT_MODELS)
    section.require("elo0", "elo1")
    try:
        return SprtConfig(**values)
    except ValueError as exc:
        raise section.error(str(exc)) from None


def openings_section(section: Section, game: str, seed: int, base_dir: Path) -> tuple[Opening, ...]:
    """An opening suite: the ``file`` (relative to ``base_dir``), or else
    ``count`` openings of ``plies`` random moves drawn from ``seed``."""
    section.allow(OPENINGS_KEYS)
    if "file" in section:
        if "plies" in section or "count" in section:
            raise section.error("give either file or plies/count, not both")
        path = (base_dir / section.path("file")).resolve()
        try:
            return load_suite(path, game)
        except OpeningError as exc:
            raise section.file_error(path, exc.line, exc.problem) from None
    plies = section.integer("plies", 4)
    count = section.integer("count", 50)
    if count < 1:
        raise section.error(f"must be a positive integer, got {count}", "count")
    if plies < 0:
        raise section.error(f"must not be negative, got {plies}", "plies")
    try:
        return random_suite(game, plies, count, seed)
    except OpeningError as exc:  # too few distinct openings of that length
        raise section.error(exc.problem) from None


# -- the tournament file ------------------------------------------------------------


def _tournament(fields: YamlMapping, path: Path | None, base_dir: Path) -> TournamentConfig:
    fields.allow(TOURNAMENT_KEYS)
    fields.require(*_REQUIRED)
    name = _name(fields, path)
    output = fields.path("output", Path("results") / name)
    margin_s = fields.number(
        "time_margin", _DEFAULT_TIME_MARGIN_S, unit="a number of seconds", must_be="not negative"
    )
    startup_s = fields.number(
        "startup_timeout", STARTUP_TIMEOUT_S, unit="a number of seconds", must_be="positive"
    )
    game = _game(fields)
    seed = fields.integer("seed", 0)
    if seed not in SEEDS:  # (tournament.json could not hold it: the run would not resume)
        raise fields.error(f"must be from {SEEDS.start} to {SEEDS.stop - 1}, got {seed}", "seed")
    submission_limits = _submission_limits(fields)
    bots, time_odds = _bots(fields, base_dir, _limits(fields, Limits()), _sandbox(fields, "none"), submission_limits)
    format = _format(fields)
    stages = _stages(fields, format, len(bots))
    # Left unset, the local executor uses this machine's cores and Ray the cluster's.
    concurrency = fields.positive_int("concurrency") if "concurrency" in fields else None
    # (Read in the order the checks always ran: a file with two mistakes names the same one.)
    time_control = _time_control(fields)
    rounds = stages[0].rounds if stages else fields.positive_int("rounds", 1)
    description = fields.string("description", "")
    openings = _openings(fields, game, seed, base_dir)
    startup_failures = fields.choice("startup_failures", STARTUP_FAILURES)
    report = fields.boolean("report", False)
    executor = fields.choice("executor", EXECUTORS)
    ray = _ray(fields, base_dir, concurrency)
    return TournamentConfig(
        name=name,
        competition=Competition(game=game, seed=seed, format=format, names=tuple(bot.name for bot in bots),
                                rounds=rounds, openings=openings, stages=stages, rules=_rules(fields, format, bots, stages)),
        time_control=time_control,
        concurrency=concurrency or os.cpu_count() or 1,
        output=(base_dir / output).resolve(),
        bots=bots,
        time_margin_ms=round(1000 * margin_s),
        startup_timeout_s=startup_s,
        path=path,
        description=description,
        startup_failures=startup_failures,
        report=report,
        executor=executor,
        ray=ray,
        seed_from=_seed_from(fields, base_dir, stages),
        seeding=_seeding(fields, stages),
        submission_limits=submission_limits,
        time_odds=time_odds,
        python_packages=_python_packages(fields, base_dir),
        python_wheels=_python_wheels(fields, base_dir),
        team_packages=fields.choice("team_packages", TEAM_PACKAGES),
        remote=remote_settings(fields, path, base_dir),
    )


def _name(fields: YamlMapping, path: Path | None) -> str:
    if "name" not in fields:
        if path is None:
            raise fields.error("required key missing (there is no file name to default to)", "name")
        return path.stem
    name = fields.string("name")
    # The name is the default output directory, so it must be one path component.
    if not name.strip() or name in (".", "..") or any(c in name for c in "/\\") or not name.isprintable():
        raise fields.error(f"{name!r} is not usable as a directory name", "name")
    return name


def _game(fields: YamlMapping) -> str:
    game = fields["game"].scalar()
    if not isinstance(game, str) or game.strip().lower() not in engine.GAMES:
        raise fields.error(f"unknown game {game!r}; known games: {', '.join(engine.GAMES)}", "game")
    return game.strip().lower()


def _time_control(fields: YamlMapping) -> TimeControl:
    text = fields["time_control"].text("must be a text like 5+0.1 or 'move 0.5'")
    try:
        return parse_time_control(text)
    except ValueError as exc:
        raise fields.error(str(exc), "time_control") from None


def _format(fields: YamlMapping) -> str:
    value = fields.get("format")
    if value is None:
        return STAGED if "stages" in fields else FORMATS[0]
    name = value.scalar()
    if name not in FORMATS:
        raise value.error(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}")
    if "stages" in fields:
        raise value.error("goes either with stages: (each stage has its format) or without it, not both")
    return name


def _stages(fields: YamlMapping, format: str, bot_count: int) -> tuple[Stage, ...]:
    """The stages of a Swiss, a knockout or ``stages:``; () for the other
    formats, which refuse the keys of these."""
    if "stages" in fields:
        for key in ("rounds", "bye", "games_per_match", "tiebreak_pairs", "settle", "max_games"):
            if key in fields:
                raise fields.error("goes in a stage of stages:, not at the top", key)
        items = fields["stages"].items("must be a list of stages, e.g. [{format: swiss, rounds: 7}, {format: knockout, top: 8}]")
        if len(items) < 2:
            raise fields["stages"].error("needs at least 2 stages (a single one is format: swiss or format: knockout)")
        stages: list[Stage] = []
        field_size = bot_count
        for number, item in enumerate(items):
            section = item.mapping("a stage must be a mapping, e.g. {format: knockout, top: 8}")
            section.allow(STAGE_KEYS)
            section.require("format")
            stage_format = section.choice("format", STAGE_FORMATS)
            if number == 0 and "top" in section:
                raise section.error("the first stage plays every bot; top: goes in a later stage", "top")
            top = None
            if number > 0:
                section.require("top")
                top = section.positive_int("top")
            stages.append(_stage(section, stage_format, field_size, top))
            field_size = top or field_size
        return tuple(stages)
    if format not in ("swiss", "knockout", "adaptive"):
        owner = {"bye": "swiss", "settle": "adaptive", "max_games": "adaptive"}
        for key in ("bye", "games_per_match", "tiebreak_pairs", "settle", "max_games"):
            if key in fields:
                raise fields.error(f"goes with format: {owner.get(key, 'knockout')}", key)
        return ()
    return (_stage(fields, format, bot_count),)


def _stage(section: YamlMapping, format: str, field_size: int, top: int | None = None) -> Stage:
    """One stage's settings: a Swiss's ``rounds`` and ``bye``, a knockout's
    ``games_per_match`` and ``tiebreak_pairs``, a round-robin's ``rounds``."""
    adaptive = ("settle", "max_games")
    wrong = {"swiss": ("games_per_match", "tiebreak_pairs", *adaptive), "knockout": ("rounds", "bye", *adaptive),
             "round-robin": ("games_per_match", "tiebreak_pairs", "bye", *adaptive),
             "adaptive": ("rounds", "games_per_match", "tiebreak_pairs", "bye")}[format]
    for key in wrong:
        if key in section:
            reason = {"knockout": "a knockout's rounds follow from its field",
                      "adaptive": "an adaptive stage plays until it settles, or max_games"}.get(format, "") \
                if key == "rounds" else ""
            reason = reason or f"does not go with format: {format}"
            raise section.error(reason, key)
    if format == "swiss" and "rounds" not in section:
        raise section.error(f"a Swiss needs rounds: (about log2 of the field: {max(1, math.ceil(math.log2(field_size)))} "
                            f"for {field_size} bots)", "rounds")
    if format == "adaptive":
        stage = _adaptive_stage(section, field_size, top)
    elif format == "knockout":
        stage = Stage("knockout", top=top, games_per_match=section.positive_int("games_per_match", 1),
                      tiebreak_pairs=_not_negative(section, "tiebreak_pairs", 3))
    else:
        stage = Stage(format, rounds=section.positive_int("rounds", 1), top=top,
                      bye=section.choice("bye", tuple(BYE_SCORES)) if format == "swiss" else "win")
    # The checks tournament.json's stages get too (StageEntry.stage), against the field here.
    problem = stage_problem(stage, field_size)
    if problem is not None:
        raise section.error(problem[1], problem[0])
    return stage


def _adaptive_stage(section: YamlMapping, field_size: int, top: int | None) -> Stage:
    """An adaptive stage: ``settle:`` (the stop rule) and ``max_games`` (its budget, required)."""
    if "max_games" not in section:
        size = top or field_size
        raise section.error(f"an adaptive stage needs max_games: (a round-robin of {size} bots is "
                            f"{size * (size - 1):,} games; a quarter of it is a fair start)", "max_games")
    settle = {}
    if "settle" in section:
        rule = section["settle"].mapping("must be a mapping, e.g. {confidence: 0.95, within_elo: 20, top: 8}")
        rule.allow(SETTLE_KEYS)
        settle = {key: rule.number(key) for key in ("confidence", "within_elo") if key in rule}
        if "top" in rule:
            settle["settle_top"] = rule.positive_int("top")
    return Stage("adaptive", top=top, max_games=section.positive_int("max_games"), **settle)


def _not_negative(section: YamlMapping, key: str, default: int) -> int:
    number = section.integer(key, default)
    if number < 0:
        raise section.error(f"must not be negative, got {number}", key)
    return number


def _seed_from(fields: YamlMapping, base_dir: Path, stages: Sequence[Stage]) -> Path | None:
    """``seed_from:``, a results directory (or its tournament file) whose
    ranking seeds the first stage.  It is read when the first round is
    paired, and the seeding kept in ``tournament.json``: the directory may
    be gone by the time the file is read again."""
    if "seed_from" not in fields:
        return None
    if not stages:
        raise fields.error("goes with format: swiss, knockout or adaptive, or stages:", "seed_from")
    return (base_dir / fields.path("seed_from")).resolve()


def _seeding(fields: YamlMapping, stages: Sequence[Stage]) -> str:
    """``seeding:``, by default ``seed_from`` with a ``seed_from:`` key and
    ``file`` without; ``seed_from`` and its key go together."""
    given = "seed_from" in fields
    if "seeding" not in fields:
        return "seed_from" if given else "file"
    if not stages:
        raise fields.error("goes with format: swiss, knockout or adaptive, or stages:", "seeding")
    seeding = fields.choice("seeding", SEEDINGS)
    if seeding == "seed_from" and not given:
        raise fields.error("seeding: seed_from needs seed_from: (the results directory whose ranking seeds the first round)", "seeding")
    if seeding != "seed_from" and given:
        raise fields.error(f"seeding: {seeding} leaves seed_from: unused; remove one of them", "seeding")
    return seeding


def _rules(fields: YamlMapping, format: str, bots: Sequence[BotConfig], stages: Sequence[Stage]) -> Rules:
    """What decides the games and the ranking beyond the schedule (:class:`Rules`)."""
    return Rules(
        sprt=_sprt(fields, len(bots), format),
        reference=_reference(fields, format, bots),
        # A Swiss or knockout ranks by its own rule (points or places) unless told otherwise.
        ranking=fields.choice("ranking", RANKINGS) if "ranking" in fields or not stages else "points",
        withdraw_after_crashes=fields.positive_int("withdraw_after_crashes") if "withdraw_after_crashes" in fields else None,
        withdrawn=_departures(fields, "withdrawn", bots),
        disqualified=_departures(fields, "disqualified", bots),
    )


def _reference(fields: YamlMapping, format: str, bots: Sequence[BotConfig]) -> tuple[str, ...]:
    """``reference: [names]``, the bots every other bot plays under ``format: reference``."""
    value = fields.get("reference")
    if format != "reference":
        if value is not None:
            raise value.error("goes with format: reference")
        return ()
    if value is None:
        raise fields.missing("reference")
    names = [item.scalar() for item in value.items("must be a list of bot names")]
    known = [bot.name for bot in bots]
    for item, name in zip(value.items(), names):
        if name not in known:
            raise item.error(f"no bot named {name!r}; bots: {', '.join(known)}")
    if not names or len(set(names)) == len(known):
        raise value.error("needs at least one reference bot and one bot outside the reference set")
    return tuple(dict.fromkeys(names))


def _departures(fields: YamlMapping, key: str, bots: Sequence[BotConfig]) -> tuple[str, ...]:
    """``withdrawn:`` or ``disqualified:``, a list of the file's bots."""
    value = fields.get(key)
    if value is None:
        return ()
    known = [bot.name for bot in bots]
    names = []
    for item in value.items(f"must be a list of bot names, e.g. {key}: [team-x]"):
        name = item.scalar()
        if name not in known:
            raise item.error(f"no bot named {name!r}; bots: {', '.join(known)}")
        if key == "disqualified" and name in _departures(fields, "withdrawn", bots):
            raise item.error(f"{name!r} is withdrawn too: a bot is either withdrawn (its results stand) or "
                             "disqualified (its games lost)")
        names.append(name)
    return tuple(dict.fromkeys(names))


def _openings(fields: YamlMapping, game: str, seed: int, base_dir: Path) -> tuple[Opening, ...] | None:
    value = fields.get("openings")
    if value is None:
        return None
    section = value.mapping("must be a mapping: {plies: 4, count: 50} or {file: openings.txt}")
    return openings_section(section, game, seed, base_dir)


def _sprt(fields: YamlMapping, bot_count: int, format: str) -> SprtConfig | None:
    value = fields.get("sprt")
    if value is None:
        return None
    section = value.mapping("must be a mapping like {elo0: 0, elo1: 5, alpha: 0.05, beta: 0.05}")
    if format not in ("round-robin", "gauntlet"):
        raise section.error(f"an SPRT is a match of two bots, not a {format} tournament")
    if bot_count != 2:
        raise section.error(f"an SPRT compares two bots; this file has {bot_count}")
    return sprt_section(section)


def _python_packages(fields: YamlMapping, base_dir: Path) -> tuple[str, ...]:
    """``python_packages:``, a list of packages (``[numpy==2.1.*, ...]``) or
    the path of a requirements file, relative to the tournament file."""
    value = fields.get("python_packages")
    if value is None:
        return ()
    if not value.is_list:
        if not isinstance(value.scalar(), str):
            raise value.error(f"must be a list such as [numpy==2.1.*] or the path of a requirements file, got "
                              f"{value.shown(value.scalar())}")
        path = (base_dir / fields.path("python_packages")).resolve()
        try:
            if path.stat().st_size > MAX_REQUIREMENTS_BYTES:
                raise value.error(f"{path} holds more than {MAX_REQUIREMENTS_BYTES // 1024} KB; a requirements file "
                                  "lists packages")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise value.error(f"cannot read the requirements file {path}: {why} (a list such as [numpy==2.1.*] "
                              "or the path of a requirements file, relative to this file)") from None
        problem = list_problem(text)
        if problem is not None:
            raise fields.file_error(path, *problem)
        return requirements_of(text)
    packages = []
    for item in value.items():
        requirement = item.scalar()
        if not isinstance(requirement, str):
            raise item.error(f"must be a package such as numpy==2.1.*, got {item.shown(requirement)}")
        problem = requirement_problem(requirement)
        if problem is not None:
            raise item.error(problem)
        packages.append(requirement.strip())
    return tuple(packages)


def _python_wheels(fields: YamlMapping, base_dir: Path) -> Path | None:
    """``python_wheels:``, a folder of wheels relative to the tournament file."""
    if "python_wheels" not in fields:
        return None
    folder = (base_dir / fields.path("python_wheels")).resolve()
    if not folder.is_dir():
        raise fields.error(f"no such folder: {folder}", "python_wheels")
    return folder


def _ray(fields: YamlMapping, base_dir: Path, actors: int | None) -> RaySettings:
    value = fields.get("ray")
    if value is None:
        return RaySettings(actors=actors)
    ray = value.mapping("must be a mapping, e.g. {address: auto, working_dir: bots}")
    ray.allow(RAY_KEYS)
    address = ray.string("address", "").strip() or None
    working_dir = None
    if "working_dir" in ray:
        working_dir = (base_dir / ray.path("working_dir")).resolve()
        if not working_dir.is_dir():
            raise ray.error(f"no such directory: {working_dir}", "working_dir")
    num_cpus = ray.number("num_cpus", 1.0, unit="a number of CPUs", must_be="positive")
    connect_timeout = ray.number("connect_timeout", 30.0, unit="seconds", must_be="positive")
    calibrate = ray.boolean("calibrate", False)
    # YAML reads a bare `off` as false.
    off = "time_scaling" in ray and ray["time_scaling"].scalar() is False
    time_scaling = "off" if off else ray.choice("time_scaling", TIME_SCALINGS)
    if time_scaling == "speed" and not calibrate:
        raise ray.error("speed scales the clock by each node's measured speed: add calibrate: true", "time_scaling")
    return RaySettings(address=address, working_dir=working_dir, num_cpus=num_cpus, actors=actors,
                       connect_timeout=connect_timeout, calibrate=calibrate, time_scaling=time_scaling)


# -- bots -------------------------------------------------------------------------


def _bots(
    fields: YamlMapping, base_dir: Path, limits: Limits, sandbox: str, bounds: SubmissionLimits
) -> tuple[tuple[BotConfig, ...], dict[str, TimeControl]]:
    """The bots of ``bots:`` then those of ``bots_from:``; ``limits`` and
    ``sandbox`` are the file's, for each bot to override; ``bounds`` what
    is read of each submission.  And the clocks of the bots of ``bots:``
    that have their own (``time_control``)."""
    if "bots" not in fields and "bots_from" not in fields:
        raise fields.missing("bots")
    bots: list[BotConfig] = []
    time_odds: dict[str, TimeControl] = {}
    first_line: dict[str, str] = {}
    if "bots" in fields:
        for item in fields["bots"].items("must be a list of bots (each with name: and cmd:)"):
            entry = item.mapping("a bot must be a mapping with name: and cmd:")
            bot = _bot(entry, base_dir, limits, sandbox)
            if bot.name in first_line:
                raise entry.error(f"duplicate bot name {bot.name!r} (first on {first_line[bot.name]})", "name")
            first_line[bot.name] = f"line {entry['name'].line}"
            bots.append(bot)
            if "time_control" in entry:
                time_odds[bot.name] = _time_control(entry)
    if "bots_from" in fields:
        # A submission named as its folder keeps its name; one whose manifest
        # claims a name already taken (or whose folder's name cleans up to one)
        # is the one that cannot run, under a name of its own.
        submissions = _submissions(fields["bots_from"], base_dir, limits, sandbox, bounds)
        for bot in sorted(submissions, key=lambda b: b.name != _folder_name(b.source)):
            if bot.name in first_line:
                manifest = safe(str(bot.source / MANIFEST), limit=None)
                taken = f"{manifest}: the name {bot.name!r} is taken by {first_line[bot.name]}"
                name = _folder_name(bot.source)
                while name in first_line:
                    name = f"{_folder_name(bot.source)[:60]}-{len(first_line)}"
                bot = replace(bot, name=name, problem=bot.problem or taken)
            first_line[bot.name] = f"the folder {safe(str(bot.source), limit=None)}"
            bots.append(bot)
    if len(bots) < 2:
        raise (fields.get("bots") or fields["bots_from"]).error(f"a tournament needs at least 2 bots, got {len(bots)}")
    return tuple(bots), time_odds


def _submissions(
    value: YamlValue, base_dir: Path, limits: Limits, sandbox: str, bounds: SubmissionLimits
) -> list[BotConfig]:
    """``bots_from: FOLDER`` (each of its sub-folders) or a glob of folders:
    one bot per folder, from the folder's ``bot.yaml``, the folder its working
    directory and all its files part of its version.  A folder whose manifest
    is missing or broken is still a bot, one that cannot start (its
    ``problem`` says why): under ``startup_failures: forfeit`` it loses its
    games and the others play on: so is a folder over ``bounds``, holding a
    special file or a link out of it, or whose command names a path outside
    it (see :mod:`arena.bot.submission`)."""
    pattern = os.path.expanduser(value.text("must be a folder of submissions, or a glob of folders such as teams/*"))
    if any(ch in pattern for ch in "*?["):
        folders = sorted(Path(p) for p in glob.glob(os.path.join(base_dir, pattern)) if os.path.isdir(p))
    else:
        root = (base_dir / pattern).resolve()
        if not root.is_dir():
            raise value.error(f"no such folder: {root}")
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    # Named after the folder as the organiser sees it, a symbolic link's name included.
    return [_submission(folder, limits, sandbox, bounds) for folder in folders if not folder.name.startswith(".")]


def _folder_name(folder: Path | None) -> str:
    """A bot name made of a submission folder's name."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", folder.name if folder else "").lstrip("_.+-")[:64] or "bot"


def _submission(seen_as: Path, limits: Limits, sandbox: str, bounds: SubmissionLimits) -> BotConfig:
    folder = seen_as.resolve()
    default_name = _folder_name(seen_as)
    manifest = folder / MANIFEST
    # A folder's name is the team's choice: named on one line, whatever it holds.
    shown_folder, shown_manifest = safe(str(folder), limit=None), safe(str(manifest), limit=None)
    try:
        try:
            text = read_manifest(manifest, bounds)
        except SubmissionProblem as exc:
            raise ConfigError(str(exc), file=shown_manifest) from None
        if text is None:
            raise ConfigError(f"no {MANIFEST} (it names the bot's cmd)", file=shown_folder)
        root = read_yaml(text, shown_manifest)
        if root is None:
            raise ConfigError("the manifest is empty; it needs at least cmd:", file=shown_manifest)
        fields = root.mapping("a manifest is a mapping with cmd: and, if you like, name:, version:, options:, env:")
        fields.allow(MANIFEST_KEYS)
        fields.require("cmd")
        bot = _bot(fields, folder, limits, sandbox, default_name=default_name)
        word = outside_word(bot.cmd, folder)
        if word is not None:
            raise fields.error(f"names '{safe(word, limit=200)}', outside the submission's folder: a submission's "
                               "command may name only its own files", "cmd")
        try:
            folder_entries(folder, bounds, deadline_of(bounds))
        except SubmissionProblem as exc:
            raise ConfigError(str(exc), file=shown_folder) from None
    except ConfigError as exc:
        return BotConfig(name=default_name, cmd=(MANIFEST,), options={}, cwd=folder, env={}, limits=limits,
                         sandbox=sandbox, source=seen_as.absolute(), problem=str(exc))
    return replace(bot, source=seen_as.absolute())


def _bot(fields: YamlMapping, base_dir: Path, limits: Limits, sandbox: str, default_name: str | None = None) -> BotConfig:
    fields.allow(BOT_KEYS)
    remote = remote_link(fields)
    fields.require(*(() if remote else ("cmd",)), *(() if default_name else ("name",)))
    name = fields["name"].scalar() if "name" in fields else default_name
    if not isinstance(name, str) or not _BOT_NAME.fullmatch(name):
        raise fields.error(
            f"bad bot name {name!r}: use 1 to 64 letters, digits and _.+- , starting with a letter or digit", "name"
        )
    if remote is not None:
        return BotConfig(name=name, cmd=(), options=_options(fields), cwd=base_dir, env={}, version=_version(fields),
                         debug=fields.boolean("debug", False), remote=remote)
    cwd = (base_dir / fields.path("cwd")).resolve() if "cwd" in fields else base_dir
    if not cwd.is_dir():
        raise fields.error(f"no such directory: {cwd}", "cwd")
    return BotConfig(
        name=name,
        cmd=_command(fields["cmd"]),
        options=_options(fields),
        cwd=cwd,
        env=_environment(fields),
        limits=_limits(fields, limits),
        sandbox=_sandbox(fields, sandbox),
        version=_version(fields),
        debug=fields.boolean("debug", False),
    )


def _version(fields: YamlMapping) -> str | None:
    """A declared version: a short printable text (a number, a tag, a date)."""
    if "version" not in fields:
        return None
    value = fields["version"]
    # As written: 1.10 is not 1.1.
    version = value.text("must be a short text such as 2, v1.3 or 2026-11-23").strip()
    if value.scalar() is None or not version or len(version) > 64 or not version.isprintable():
        raise value.error(f"must be a short printable text (1 to 64 characters), got {version!r}")
    return version


def _limits(fields: YamlMapping, inherited: Limits) -> Limits:
    """A ``limits:`` mapping; keys it leaves out keep ``inherited``."""
    value = fields.get("limits")
    if value is None:
        return inherited
    section = value.mapping(f"must be a mapping with some of: {', '.join(LIMIT_KEYS)}")
    section.allow(LIMIT_KEYS)
    return replace(inherited, **{key: _limit(item, whole=key != "cpu_s") for key, item in section.items()})


def _submission_limits(fields: YamlMapping) -> SubmissionLimits:
    """``submission_limits:``; keys it leaves out keep their defaults."""
    value = fields.get("submission_limits")
    if value is None:
        return SubmissionLimits()
    section = value.mapping(f"must be a mapping with some of: {', '.join(SUBMISSION_KEYS)}")
    section.allow(SUBMISSION_KEYS)
    return SubmissionLimits(**{key: _limit(item, whole=key != "fingerprint_s") for key, item in section.items()})


def _limit(value: YamlValue, *, whole: bool) -> float | None:
    """One limit: ``null`` lifts it."""
    limit = value.scalar()
    if limit is None:
        return None
    if (
        isinstance(limit, bool) or not isinstance(limit, (int, float)) or (whole and not isinstance(limit, int))
        or not math.isfinite(limit) or limit <= 0
    ):
        kind = "a positive integer" if whole else "a positive number of seconds"
        raise value.error(f"must be {kind} or null (no limit), got {value.shown(limit)}")
    return limit


def _sandbox(fields: YamlMapping, inherited: str) -> str:
    value = fields.get("sandbox")
    if value is None:
        return inherited
    name = value.scalar()
    if name is None or name is False:
        return "none"
    if name not in SANDBOXES:
        raise value.error(f"unknown sandbox {name!r}; known: {', '.join(SANDBOXES)}")
    return name


def _command(value: YamlValue) -> tuple[str, ...]:
    """A command line, split as a POSIX shell splits it, or the list of its words."""
    command: str | list[str]
    if value.is_list:
        command = [_argument(item) for item in value.items()]
    else:
        command = value.scalar()
        if not isinstance(command, str):
            raise value.error(f"must be a command line or a list of strings, got {kind_of(command)}")
    try:
        return split_command(command)
    except ValueError as exc:
        raise value.error(str(exc)) from None


def _argument(value: YamlValue) -> str:
    argument = value.scalar()
    if not isinstance(argument, str):
        raise value.error(f"must be a string, got {kind_of(argument)} (quote it)")
    return argument


def _options(fields: YamlMapping) -> dict[str, Any]:
    value = fields.get("options")
    if value is None:
        return {}
    return value.mapping("must be a mapping (it is sent to the bot as a JSON object)").json("options")


def _environment(fields: YamlMapping) -> dict[str, str]:
    value = fields.get("env")
    if value is None:
        return {}
    section = value.mapping("must be a mapping of variable names to strings")
    env: dict[str, str] = {}
    for key, item in section.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise section.key_error(key, f"bad variable name {key!r}")
        text = item.scalar()
        if not isinstance(text, str):
            hint = f' (quote it: "{item.raw}")' if item.raw is not None else ""
            raise item.error(f"must be a string, got {kind_of(text)}{hint}")
        if "\0" in text:
            raise item.error("a NUL character cannot be passed in the environment")
        env[key] = text
    return env
