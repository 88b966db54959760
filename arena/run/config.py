"""Tournament files: read and validate the YAML into frozen, typed objects.

Every mistake is refused before anything runs, with a one-line message that
names the file, the line and the key (``demo.yaml:7: bots[1].name: duplicate
bot name 'greedy'``).  Nothing downstream of this module sees raw YAML.

    >>> config = parse_config('''
    ... name: example
    ... game: oxono
    ... time_control: 5+0.1
    ... bots:
    ...   - {name: a, cmd: python -m bots.random_bot}
    ...   - {name: b, cmd: python -m bots.greedy}
    ... ''', base_dir=Path("/tmp"))
    >>> [bot.name for bot in config.bots], str(config.time_control), config.rounds
    (['a', 'b'], '5+0.1', 1)
"""

from __future__ import annotations

import difflib
import math
import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

import engine
from arena.bot.limits import LIMIT_KEYS, Limits
from arena.bot.sandbox import SANDBOXES, SandboxUnavailable, check_sandbox
from arena.bot.spec import BotConfig, command_problem, split_command
from arena.game.clock import TimeControl, parse_time_control
from arena.game.openings import Opening, OpeningError, load_suite, random_suite
from arena.results.statistics import SprtConfig

__all__ = [
    "BOT_KEYS",
    "EXECUTORS",
    "FORMATS",
    "RAY_KEYS",
    "TOURNAMENT_KEYS",
    "check_programs",
    "ConfigError",
    "STARTUP_FAILURES",
    "RaySettings",
    "TournamentConfig",
    "load_config",
    "parse_config",
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
    "startup_failures",
    "report",
    "executor",
    "ray",
    "bots",
)
#: Every key a bot entry may hold.
BOT_KEYS = ("name", "cmd", "options", "cwd", "env", "limits", "sandbox")
#: The keys of ``openings:`` (either ``file`` or ``plies``/``count``) and of ``sprt:``.
OPENINGS_KEYS = ("plies", "count", "file")
SPRT_KEYS = ("elo0", "elo1", "alpha", "beta")
#: The pairing formats, see :mod:`arena.run.schedule`.
FORMATS = ("round-robin", "gauntlet")
#: What a bot that fails the pre-flight does: stop the run, or forfeit its games.
STARTUP_FAILURES = ("stop", "forfeit")
#: Limits on small inputs that would cost a lot: a tournament file and the
#: values an ``options`` mapping may expand to through YAML aliases (for a
#: command's, see :mod:`arena.bot.spec`).
MAX_FILE_BYTES = 1_000_000
MAX_OPTION_VALUES = 100_000
#: Where games are played: this machine's cores, or a Ray cluster (:mod:`arena.run.ray_executor`).
EXECUTORS = ("local", "ray")
#: Every key the ``ray:`` mapping may hold.
RAY_KEYS = ("address", "working_dir", "num_cpus")

_REQUIRED = ("game", "time_control", "bots")
_BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: A key node and its value node.
_Pair = tuple[yaml.Node, yaml.Node]
_DEFAULT_TIME_MARGIN_S = 0.05
_DEFAULT_STARTUP_TIMEOUT_S = 10.0


class ConfigError(ValueError):
    """A tournament file that cannot be used.  ``str()`` is one line:
    ``<file>:<line>: <key path>: <what is wrong>`` (line and key left out when
    there is none, e.g. for a file that cannot be read)."""

    def __init__(self, problem: str, *, file: str = "<string>", line: int | None = None, key: str = "") -> None:
        self.problem = " ".join(problem.split())
        self.file = file
        self.line = line
        self.key = key
        super().__init__(self.problem)

    def __str__(self) -> str:
        parts = [self.file] if self.file else []
        if self.line is not None:
            parts.append(str(self.line))
        if self.key:
            parts.append(f" {self.key}")
        parts.append(f" {self.problem}")
        return ":".join(parts).lstrip()


@dataclass(frozen=True)
class RaySettings:
    """The ``ray:`` mapping, used when the executor is ``ray``.

    ``address`` is None to start a Ray instance on this machine; ``working_dir``
    (absolute) is shipped to every node; each actor reserves ``num_cpus``.
    ``actors`` is the file's ``concurrency`` when it gives one, else None: as
    many actors as the cluster's CPUs hold."""

    address: str | None = None
    working_dir: Path | None = None
    num_cpus: float = 1.0
    actors: int | None = None


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file.  Paths are absolute."""

    name: str
    game: str
    time_control: TimeControl
    rounds: int
    format: str
    concurrency: int
    seed: int
    output: Path
    bots: tuple[BotConfig, ...]
    time_margin_ms: int
    startup_timeout_s: float
    path: Path | None
    description: str
    #: The opening suite (see :mod:`arena.game.openings`); ``None``: the game's start positions.
    openings: tuple[Opening, ...] | None = None
    #: A sequential test between the two bots; ``None``: play every game.
    sprt: SprtConfig | None = None
    #: ``stop``: a bot that fails the pre-flight stops the run; ``forfeit``: it forfeits its games.
    startup_failures: str = "stop"
    #: Write ``report.html`` in the output directory, refreshed during the run.
    report: bool = False
    executor: str = "local"
    ray: RaySettings = RaySettings()
    #: ``format: reference``: the bots every other bot plays (and only those).
    reference: tuple[str, ...] = ()
    #: How game ids name a pair: ``names`` (the bots' names), or ``positions``
    #: (their places in the file), as results directories written before
    #: version 0.2 did; see :func:`arena.run.schedule.make_schedule`.
    game_ids: str = "names"

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
    return _Parser(str(path) if path is not None else "<string>").tournament(
        text, path=path.resolve() if path is not None else None, base_dir=base_dir.resolve()
    )


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


def check_programs(config: TournamentConfig) -> None:
    """Refuse a tournament whose bot programs cannot be found, before anything
    runs: a typo in a command would otherwise forfeit every game of that bot.
    See :func:`arena.bot.spec.command_problem`.  A bot to run under a
    sandbox this machine cannot run is refused too."""
    for number, bot in enumerate(config.bots):
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


class _Parser:
    """Walks the composed YAML nodes, so that every error knows its line."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.loader = yaml.SafeLoader("")
        # Merged entries by mapping node: a mapping merged many times over is
        # resolved once, so a merge-key bomb costs no more than its size.
        self._merged: dict[int, list[_Pair]] = {}
        #: Values built so far for ``options``, against alias bombs.
        self._option_values = 0

    def error(self, node: yaml.Node | None, key: str, problem: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else None
        return ConfigError(problem, file=self.file, line=line, key=key)

    # -- the document -----------------------------------------------------

    def tournament(self, text: str, *, path: Path | None, base_dir: Path) -> TournamentConfig:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else None
            problem = exc.problem or exc.context or "unreadable"
            raise ConfigError(f"bad YAML: {problem}", file=self.file, line=line) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"bad YAML: {exc}", file=self.file) from None
        if root is None:
            raise ConfigError("the file is empty; it needs at least game, time_control and bots", file=self.file)
        if not isinstance(root, yaml.MappingNode):
            raise self.error(root, "", "a tournament file must be a mapping of keys (game:, time_control:, bots:, ...)")
        fields = self.mapping(root, "", TOURNAMENT_KEYS)
        for key in _REQUIRED:
            if key not in fields:
                raise self.error(root, key, "required key missing")

        name = self.tournament_name(root, fields, path)
        output = self.path(fields["output"], "output") if "output" in fields else Path("results") / name
        margin_s = self.seconds(fields.get("time_margin"), "time_margin", _DEFAULT_TIME_MARGIN_S, zero_ok=True)
        startup_s = self.seconds(
            fields.get("startup_timeout"), "startup_timeout", _DEFAULT_STARTUP_TIMEOUT_S, zero_ok=False
        )
        game = self.game(fields["game"][1])
        seed = self.integer(fields.get("seed"), "seed", 0)
        bots = self.bots(
            fields["bots"][1], base_dir,
            self.limits(fields.get("limits"), "limits", Limits()),
            self.sandbox(fields.get("sandbox"), "sandbox", "none"),
        )
        # Left unset, the local executor uses this machine's cores and Ray the cluster's.
        concurrency = self.positive_int(fields["concurrency"], "concurrency", 1) if "concurrency" in fields else None
        return TournamentConfig(
            name=name,
            game=game,
            time_control=self.time_control(fields["time_control"][1]),
            rounds=self.positive_int(fields.get("rounds"), "rounds", 1),
            format=self.format(fields.get("format")),
            concurrency=concurrency or os.cpu_count() or 1,
            seed=seed,
            output=(base_dir / output).resolve(),
            bots=bots,
            time_margin_ms=round(1000 * margin_s),
            startup_timeout_s=startup_s,
            path=path,
            description=self.string(fields.get("description"), "description", ""),
            openings=self.openings(fields.get("openings"), game, seed, base_dir),
            sprt=self.sprt(fields.get("sprt"), len(bots)),
            startup_failures=self.choice(fields.get("startup_failures"), "startup_failures", STARTUP_FAILURES),
            report=self.boolean(fields.get("report"), "report", False),
            executor=self.choice(fields.get("executor"), "executor", EXECUTORS),
            ray=self.ray(fields.get("ray"), base_dir, concurrency),
        )

    def mapping(
        self, node: yaml.MappingNode, where: str, known: tuple[str, ...]
    ) -> dict[str, _Pair]:
        """The (key node, value node) pairs of a mapping whose keys must be among ``known``."""
        fields: dict[str, _Pair] = {}
        for key_node, value_node in self.entries(node, where):
            key = self.scalar(key_node, where)
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(known)}"
                raise self.error(key_node, _join(where, str(key)), f"unknown key {key!r}{hint}")
            fields[key] = (key_node, value_node)
        return fields

    def entries(
        self, node: yaml.MappingNode, where: str, enclosing: frozenset[int] = frozenset()
    ) -> list[_Pair]:
        """The key/value node pairs of a mapping, with ``<<: *anchor`` merge keys
        resolved as YAML loading does (the mapping's own keys win, then earlier
        merged mappings).  Duplicate keys are refused: plain YAML loading would
        silently keep the last one."""
        if id(node) in enclosing:
            raise self.error(node, _join(where, "<<"), "a merge key that includes its own mapping")
        if id(node) in self._merged:
            return self._merged[id(node)]
        inherited: dict[Any, _Pair] = {}
        own: list[_Pair] = []
        first_line: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        raise self.error(source, _join(where, "<<"), "takes a mapping or a list of mappings")
                    for pair in self.entries(source, where, enclosing | {id(node)}):
                        inherited.setdefault(self.scalar(pair[0], where), pair)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, where, "a key must be a plain name, not a list or mapping")
            key = self.scalar(key_node, where)
            if key in first_line:
                problem = f"duplicate key {key!r} (first on line {first_line[key]})"
                raise self.error(key_node, _join(where, str(key)), problem)
            first_line[key] = key_node.start_mark.line + 1
            own.append((key_node, value_node))
        entries = [pair for key, pair in inherited.items() if key not in first_line] + own
        self._merged[id(node)] = entries
        return entries

    # -- top-level values ---------------------------------------------------

    def tournament_name(self, root: yaml.Node, fields: dict[str, _Pair], path: Path | None) -> str:
        if "name" not in fields:
            if path is None:
                raise self.error(root, "name", "required key missing (there is no file name to default to)")
            return path.stem
        node = fields["name"][1]
        name = self.string(fields["name"], "name", "")
        # The name is the default output directory, so it must be one path component.
        if not name.strip() or name in (".", "..") or any(c in name for c in "/\\") or not name.isprintable():
            raise self.error(node, "name", f"{name!r} is not usable as a directory name")
        return name

    def game(self, node: yaml.Node) -> str:
        value = self.scalar(node, "game")
        if not isinstance(value, str) or value.strip().lower() not in engine.GAMES:
            raise self.error(node, "game", f"unknown game {value!r}; known games: {', '.join(engine.GAMES)}")
        return value.strip().lower()

    def time_control(self, node: yaml.Node) -> TimeControl:
        # The raw text, not the YAML value: `10` stays "10" and `1:30` is not
        # silently read as the YAML 1.1 sexagesimal integer 90.
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, "time_control", "must be a text like 5+0.1 or 'move 0.5'")
        try:
            return parse_time_control(node.value)
        except ValueError as exc:
            raise self.error(node, "time_control", str(exc)) from None

    def choice(self, pair: _Pair | None, key: str, choices: tuple[str, ...]) -> str:
        if pair is None:
            return choices[0]
        value = self.scalar(pair[1], key)
        if not isinstance(value, str) or value.strip().lower() not in choices:
            raise self.error(pair[1], key, f"unknown value {value!r}; use one of: {', '.join(choices)}")
        return value.strip().lower()

    def format(self, pair: _Pair | None) -> str:
        if pair is None:
            return FORMATS[0]
        value = self.scalar(pair[1], "format")
        if value not in FORMATS:
            raise self.error(pair[1], "format", f"unknown format {value!r}; known formats: {', '.join(FORMATS)}")
        return value

    def openings(self, pair: _Pair | None, game: str, seed: int, base_dir: Path) -> tuple[Opening, ...] | None:
        if pair is None:
            return None
        node = pair[1]
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, "openings", "must be a mapping: {plies: 4, count: 50} or {file: openings.txt}")
        fields = self.mapping(node, "openings", OPENINGS_KEYS)
        if "file" in fields:
            if "plies" in fields or "count" in fields:
                raise self.error(node, "openings", "give either file or plies/count, not both")
            path = (base_dir / self.path(fields["file"], "openings.file")).resolve()
            try:
                return load_suite(path, game)
            except OpeningError as exc:
                raise ConfigError(exc.problem, file=str(path), line=exc.line) from None
        plies = self.integer(fields.get("plies"), "openings.plies", 4)
        count = self.positive_int(fields.get("count"), "openings.count", 50)
        if plies < 0:
            raise self.error(fields["plies"][1], "openings.plies", f"must not be negative, got {plies}")
        try:
            return random_suite(game, plies, count, seed)
        except OpeningError as exc:
            raise self.error(node, "openings", exc.problem) from None

    def sprt(self, pair: _Pair | None, bot_count: int) -> SprtConfig | None:
        if pair is None:
            return None
        node = pair[1]
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, "sprt", "must be a mapping like {elo0: 0, elo1: 5, alpha: 0.05, beta: 0.05}")
        if bot_count != 2:
            raise self.error(node, "sprt", f"an SPRT compares two bots; this file has {bot_count}")
        fields = self.mapping(node, "sprt", SPRT_KEYS)
        values = {}
        for key, (_, value_node) in fields.items():
            value = self.scalar(value_node, f"sprt.{key}")
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise self.error(value_node, f"sprt.{key}", f"must be a number, got {_shown(value_node, value)}")
            values[key] = float(value)
        for key in ("elo0", "elo1"):
            if key not in values:
                raise self.error(node, f"sprt.{key}", "required key missing")
        try:
            return SprtConfig(**values)
        except ValueError as exc:
            raise self.error(node, "sprt", str(exc)) from None

    def ray(self, pair: _Pair | None, base_dir: Path, actors: int | None) -> RaySettings:
        if pair is None:
            return RaySettings(actors=actors)
        if not isinstance(pair[1], yaml.MappingNode):
            raise self.error(pair[1], "ray", "must be a mapping, e.g. {address: auto, working_dir: bots}")
        fields = self.mapping(pair[1], "ray", RAY_KEYS)
        address = self.string(fields.get("address"), "ray.address", "").strip() or None
        working_dir = None
        if "working_dir" in fields:
            working_dir = (base_dir / self.path(fields["working_dir"], "ray.working_dir")).resolve()
            if not working_dir.is_dir():
                raise self.error(fields["working_dir"][1], "ray.working_dir", f"no such directory: {working_dir}")
        num_cpus = self.seconds(fields.get("num_cpus"), "ray.num_cpus", 1.0, zero_ok=False, unit="a number of CPUs")
        return RaySettings(address=address, working_dir=working_dir, num_cpus=num_cpus, actors=actors)

    # -- bots -----------------------------------------------------------------

    def bots(self, node: yaml.Node, base_dir: Path, limits: Limits, sandbox: str) -> tuple[BotConfig, ...]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, "bots", "must be a list of bots (each with name: and cmd:)")
        if len(node.value) < 2:
            raise self.error(node, "bots", f"a tournament needs at least 2 bots, got {len(node.value)}")
        bots: list[BotConfig] = []
        first_line: dict[str, int] = {}
        for i, item in enumerate(node.value):
            bot, name_node = self.bot(item, f"bots[{i}]", base_dir, limits, sandbox)
            if bot.name in first_line:
                problem = f"duplicate bot name {bot.name!r} (first on line {first_line[bot.name]})"
                raise self.error(name_node, f"bots[{i}].name", problem)
            first_line[bot.name] = name_node.start_mark.line + 1
            bots.append(bot)
        return tuple(bots)

    def bot(
        self, node: yaml.Node, where: str, base_dir: Path, limits: Limits, sandbox: str
    ) -> tuple[BotConfig, yaml.Node]:
        """One bot entry, and the node of its name (for duplicate errors)."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, "a bot must be a mapping with name: and cmd:")
        fields = self.mapping(node, where, BOT_KEYS)
        for key in ("name", "cmd"):
            if key not in fields:
                raise self.error(node, f"{where}.{key}", "required key missing")
        name_node = fields["name"][1]
        name = self.scalar(name_node, f"{where}.name")
        if not isinstance(name, str) or not _BOT_NAME.fullmatch(name):
            raise self.error(
                name_node,
                f"{where}.name",
                f"bad bot name {name!r}: use 1 to 64 letters, digits and _.+- , starting with a letter or digit",
            )
        cwd_pair = fields.get("cwd")
        cwd = (base_dir / self.path(cwd_pair, f"{where}.cwd")).resolve() if cwd_pair else base_dir
        if not cwd.is_dir():
            raise self.error(cwd_pair[1] if cwd_pair else node, f"{where}.cwd", f"no such directory: {cwd}")
        bot = BotConfig(
            name=name,
            cmd=self.command(fields["cmd"][1], f"{where}.cmd"),
            options=self.options(fields.get("options"), f"{where}.options"),
            cwd=cwd,
            env=self.environment(fields.get("env"), f"{where}.env"),
            limits=self.limits(fields.get("limits"), f"{where}.limits", limits),
            sandbox=self.sandbox(fields.get("sandbox"), f"{where}.sandbox", sandbox),
        )
        return bot, name_node

    def limits(self, pair: _Pair | None, where: str, inherited: Limits) -> Limits:
        """A ``limits:`` mapping; keys it leaves out keep ``inherited``.
        ``null`` lifts a limit."""
        if pair is None:
            return inherited
        node = pair[1]
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, f"must be a mapping with some of: {', '.join(LIMIT_KEYS)}")
        values: dict[str, Any] = {}
        for key, (_key_node, value_node) in self.mapping(node, where, LIMIT_KEYS).items():
            value = self.scalar(value_node, _join(where, key))
            if value is None:
                values[key] = None
                continue
            whole = key != "cpu_s"
            if (
                isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int))
                or not math.isfinite(value) or value <= 0
            ):
                kind = "a positive integer" if whole else "a positive number of seconds"
                raise self.error(value_node, _join(where, key), f"must be {kind} or null (no limit), got {_shown(value_node, value)}")
            values[key] = value
        return replace(inherited, **values)

    def sandbox(self, pair: _Pair | None, where: str, inherited: str) -> str:
        if pair is None:
            return inherited
        value = self.scalar(pair[1], where)
        if value is None or value is False:
            return "none"
        if value not in SANDBOXES:
            raise self.error(pair[1], where, f"unknown sandbox {value!r}; known: {', '.join(SANDBOXES)}")
        return value

    def command(self, node: yaml.Node, where: str) -> tuple[str, ...]:
        command: str | list[str]
        if isinstance(node, yaml.SequenceNode):
            command = []
            for i, item in enumerate(node.value):
                arg = self.scalar(item, f"{where}[{i}]")
                if not isinstance(arg, str):
                    raise self.error(item, f"{where}[{i}]", f"must be a string, got {_kind(arg)} (quote it)")
                command.append(arg)
        else:
            command = self.scalar(node, where)
            if not isinstance(command, str):
                raise self.error(node, where, f"must be a command line or a list of strings, got {_kind(command)}")
        try:
            return split_command(command)
        except ValueError as exc:
            raise self.error(node, where, str(exc)) from None

    def options(self, pair: _Pair | None, where: str) -> dict[str, Any]:
        if pair is None:
            return {}
        node = pair[1]
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, "must be a mapping (it is sent to the bot as a JSON object)")
        return self.json_value(node, where, set())

    def json_value(self, node: yaml.Node, where: str, open_nodes: set[int]) -> Any:
        """The node as a JSON-compatible value: options travel to the bot in the
        hello message, so dates, binary and non-string keys are refused here
        rather than breaking the tournament later."""
        if id(node) in open_nodes:
            raise self.error(node, where, "a recursive alias cannot be sent as JSON")
        self._option_values += 1
        if self._option_values > MAX_OPTION_VALUES:
            raise self.error(
                node, where, f"the options expand to more than {MAX_OPTION_VALUES} values (YAML aliases repeat what they name)"
            )
        if isinstance(node, yaml.MappingNode):
            open_nodes.add(id(node))
            result: dict[str, Any] = {}
            for key_node, value_node in self.entries(node, where):
                key = self.scalar(key_node, where)
                if not isinstance(key, str):
                    raise self.error(key_node, where, f"keys must be strings, got {_kind(key)} {key!r} (quote it)")
                result[key] = self.json_value(value_node, _join(where, key), open_nodes)
            open_nodes.discard(id(node))
            return result
        if isinstance(node, yaml.SequenceNode):
            open_nodes.add(id(node))
            items = [self.json_value(item, f"{where}[{i}]", open_nodes) for i, item in enumerate(node.value)]
            open_nodes.discard(id(node))
            return items
        value = self.scalar(node, where)
        if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
            return value
        raise self.error(node, where, f"{node.value!r} ({_kind(value)}) cannot be sent to the bot as JSON (quote it)")

    def environment(self, pair: _Pair | None, where: str) -> dict[str, str]:
        if pair is None:
            return {}
        node = pair[1]
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, "must be a mapping of variable names to strings")
        env: dict[str, str] = {}
        for key_node, value_node in self.entries(node, where):
            key = self.scalar(key_node, where)
            if not isinstance(key, str) or not key or "=" in key or "\0" in key:
                raise self.error(key_node, where, f"bad variable name {key!r}")
            value = self.scalar(value_node, _join(where, str(key)))
            if not isinstance(value, str):
                hint = f' (quote it: "{value_node.value}")' if isinstance(value_node, yaml.ScalarNode) else ""
                raise self.error(value_node, _join(where, key), f"must be a string, got {_kind(value)}{hint}")
            if "\0" in value:
                raise self.error(value_node, _join(where, key), "a NUL character cannot be passed in the environment")
            env[key] = value
        return env

    # -- typed scalars --------------------------------------------------------

    def scalar(self, node: yaml.Node, where: str) -> Any:
        """The YAML value of a scalar node; a list or mapping node comes back
        as an empty one, so that type checks name its kind."""
        if not isinstance(node, yaml.ScalarNode):
            return [] if isinstance(node, yaml.SequenceNode) else {}
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:  # an unknown or unsafe tag such as !!python/object
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.error(node, where, f"bad value {node.value!r}: {problem}") from None

    def string(self, pair: _Pair | None, key: str, default: str) -> str:
        if pair is None:
            return default
        value = self.scalar(pair[1], key)
        if not isinstance(value, str):
            raise self.error(pair[1], key, f"must be a string, got {_kind(value)}")
        return value

    def path(self, pair: _Pair, key: str) -> Path:
        text = self.string(pair, key, "")
        if not text or "\0" in text:
            raise self.error(pair[1], key, f"{text!r} is not a path")
        return Path(os.path.expanduser(text))

    def integer(self, pair: _Pair | None, key: str, default: int) -> int:
        if pair is None:
            return default
        value = self.scalar(pair[1], key)
        # bool is a subclass of int, but `seed: yes` is surely a mistake.
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(pair[1], key, f"must be an integer, got {_shown(pair[1], value)}")
        return value

    def boolean(self, pair: _Pair | None, key: str, default: bool) -> bool:
        if pair is None:
            return default
        value = self.scalar(pair[1], key)
        if not isinstance(value, bool):
            raise self.error(pair[1], key, f"must be true or false, got {_shown(pair[1], value)}")
        return value

    def positive_int(self, pair: _Pair | None, key: str, default: int) -> int:
        value = self.integer(pair, key, default)
        if value < 1:
            raise self.error(pair[1] if pair else None, key, f"must be a positive integer, got {value}")
        return value

    def seconds(
        self, pair: _Pair | None, key: str, default: float, *, zero_ok: bool, unit: str = "a number of seconds"
    ) -> float:
        if pair is None:
            return default
        value = self.scalar(pair[1], key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise self.error(pair[1], key, f"must be {unit}, got {_shown(pair[1], value)}")
        if value < 0 or (value == 0 and not zero_ok):
            bound = "not negative" if zero_ok else "positive"
            raise self.error(pair[1], key, f"must be {bound}, got {value:g}")
        return float(value)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _shown(node: yaml.Node, value: Any) -> str:
    """A value's kind and, for a scalar, the text as written: ``boolean 'yes'``."""
    return f"{_kind(value)} {node.value!r}" if isinstance(node, yaml.ScalarNode) else _kind(value)


def _kind(value: Any) -> str:
    """A YAML-ish name for a value's type, for messages."""
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        bytes: "binary",
    }.get(type(value), type(value).__name__)
