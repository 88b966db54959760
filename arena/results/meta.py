"""``tournament.json``: what a results directory says of its tournament.

:class:`TournamentMeta` is the one typed record of that file and this module
its only reader and writer.  It holds everything needed to rebuild the
schedule and the ranking without the tournament file: the tournament's
:class:`~arena.formats.competition.Competition` whole (the game, the seed,
the format and its stages, the opening suite's moves, the rules), the
clock, the bots with their versions and fingerprints, the bots that left,
and for a Swiss, knockout or staged tournament the seeding and every round
paired so far.

The file is input like the records (anyone may edit or forge it), so
:meth:`TournamentMeta.from_json` checks every field and bounds every size: a
file over :data:`MAX_META_BYTES`, more than :data:`MAX_BOTS` bots or an
opening suite over :data:`MAX_SUITE` openings is refused with one line
(:class:`MetaError`), never a hang or an exhausted memory.  Every pairing
is checked (:func:`arena.formats.stages.pairing_problem`):
one no format makes is :class:`ForgedPairing`, which every command refuses.  A key written
by a later version only is kept out; a key missing from an older file takes
its old default (a directory written before ``ranking`` existed ranks by
TrueSkill, as it always did), and where no default stands in for it (the
seed, the game ids' scheme, the suite's moves) :class:`Unsaid` says so.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from arena.base.json_checks import listed, mapping, short, text, whole
from arena.base.safe_files import RefusedFile, read_file
from arena.formats.competition import MAX_SUITE, Competition, Unsaid
from arena.formats.stages import MAX_FIELD, Pairing, Stage, pairing_problem, pairings_from_json
from arena.game.clock import TimeControl
from arena.game.openings import Opening
from arena.game.records import MAX_RATIO, GameRecord
from arena.results.store import store_error, write_atomically

__all__ = ["MAX_BOTS", "MAX_META_BYTES", "MAX_SUITE", "META_FILE", "ForgedPairing", "MetaBot", "MetaCluster",
           "MetaError", "MetaNode",
           "TournamentMeta", "read_meta", "write_meta"]

META_FILE = "tournament.json"
#: Bounds of what a ``tournament.json`` may hold.
MAX_META_BYTES = 64 * 2**20
MAX_BOTS = 10_000
MAX_TEXT = 10_000
#: The most nodes of a cluster a file may list, and the most CPUs of one.
MAX_NODES = 10_000
MAX_CPUS = 1_000_000
#: The keys of ``tournament.json``, in their order in the file.
_ORDER = ("name", "description", "game", "time_control", "seed", "format", "rounds", "reference", "ranking",
          "withdraw_after_crashes", "withdrawn", "disqualified", "sprt", "game_ids", "games", "bots", "departed",
          "openings", "stages", "seeding", "pairings", "cluster")


class MetaError(ValueError):
    """A ``tournament.json`` that is not one the arena writes; ``str()`` is one line."""


class ForgedPairing(MetaError):
    """A ``tournament.json`` whose pairings no format makes (a bot paired
    with itself, or twice in a round).  Unlike
    another :class:`MetaError`, which a reader ignores to rank every readable
    game, this one is refused by every command: the games such a round
    scheduled are not the tournament's, and ranking them would pass a forgery off as results."""


@dataclass(frozen=True)
class MetaBot:
    """A bot as ``tournament.json`` remembers it."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    version: str | None = None
    #: Its :class:`arena.bot.version.Fingerprint` as JSON: what its version was computed from.
    fingerprint: Mapping[str, Any] | None = None
    #: Versions whose games were kept (``--keep``) though another version plays now.
    earlier_versions: tuple[str, ...] = ()
    #: Its own clock (time odds); None: the tournament's.
    time_control: TimeControl | None = None
    #: It plays from another machine (``remote: true``).
    remote: bool = False

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "options": dict(self.options)}
        if self.version is not None:
            entry["version"] = self.version
        if self.fingerprint is not None:
            entry["fingerprint"] = dict(self.fingerprint)
        if self.earlier_versions:
            entry["earlier_versions"] = sorted(self.earlier_versions)
        if self.time_control is not None:
            entry["time_control"] = self.time_control.to_json()
        if self.remote:
            entry["remote"] = True
        return entry

    @classmethod
    def from_json(cls, entry: Any, where: str) -> MetaBot:
        entry = _mapping(entry, where)
        try:
            clock = None if entry.get("time_control") is None else TimeControl.from_json(entry["time_control"])
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
            raise MetaError(f"{where}.time_control: {exc}") from None
        return cls(
            name=_text(entry.get("name"), f"{where}.name", limit=100),
            options=_mapping(entry.get("options", {}), f"{where}.options"),
            version=None if entry.get("version") is None else _text(entry["version"], f"{where}.version", limit=100),
            fingerprint=None if entry.get("fingerprint") is None else _mapping(entry["fingerprint"], f"{where}.fingerprint"),
            earlier_versions=tuple(_text(v, f"{where}.earlier_versions", limit=100)
                                   for v in _list(entry.get("earlier_versions", []), f"{where}.earlier_versions")),
            time_control=clock,
            remote=entry.get("remote") is True,
        )


@dataclass(frozen=True)
class MetaNode:
    """A node of the Ray cluster a run played on, as Ray listed it at the
    start; on a calibrated cluster, its ``speed`` over the driver's machine's."""

    host: str
    node_id: str
    cpus: float
    speed: float | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"host": self.host, "node_id": self.node_id, "cpus": self.cpus}
        if self.speed is not None:
            entry["speed"] = self.speed
        return entry

    @classmethod
    def from_json(cls, entry: Any, where: str) -> MetaNode:
        entry = _mapping(entry, where)
        cpus = entry.get("cpus")
        if not (isinstance(cpus, (int, float)) and not isinstance(cpus, bool) and 0 <= cpus <= MAX_CPUS):
            raise MetaError(f"{where}.cpus: must be a number from 0 to {MAX_CPUS}, got {short(cpus)}")
        speed = entry.get("speed")
        if not (speed is None or isinstance(speed, (int, float)) and not isinstance(speed, bool)
                and 0 < speed <= MAX_RATIO):
            raise MetaError(f"{where}.speed: must be a positive number up to {MAX_RATIO:g}, got {short(speed)}")
        return cls(_line(entry.get("host"), f"{where}.host", limit=253),
                   _line(entry.get("node_id"), f"{where}.node_id", limit=128), cpus, speed)


@dataclass(frozen=True)
class MetaCluster:
    """The Ray cluster the last run played on: its nodes at the start, and
    the driver's Python and Ray (Ray refuses nodes with others)."""

    python: str
    ray: str
    nodes: tuple[MetaNode, ...]

    def line(self) -> str:
        """The run's line at the start, e.g. ``cluster: 2 nodes, 6 CPUs (head 4, w1 2); Python 3.12.3, Ray 2.60.0``."""
        count = len(self.nodes)
        cpus = sum(node.cpus for node in self.nodes)
        each = ", ".join(f"{node.host} {node.cpus:g}" + (f" at speed {node.speed:.2f}" if node.speed else "")
                         for node in self.nodes)
        return (f"cluster: {count} node{'' if count == 1 else 's'}, {cpus:g} CPUs ({each}); "
                f"Python {self.python}, Ray {self.ray}")

    def to_json(self) -> dict[str, Any]:
        return {"python": self.python, "ray": self.ray, "nodes": [node.to_json() for node in self.nodes]}

    @classmethod
    def from_json(cls, value: Any) -> MetaCluster:
        value = _mapping(value, "cluster")
        nodes = _list(value.get("nodes"), "cluster.nodes")
        if len(nodes) > MAX_NODES:
            raise MetaError(f"cluster.nodes: {len(nodes)} nodes, over the {MAX_NODES} a file may list")
        return cls(_line(value.get("python"), "cluster.python", limit=100), _line(value.get("ray"), "cluster.ray", limit=100),
                   tuple(MetaNode.from_json(node, f"cluster.nodes[{i}]") for i, node in enumerate(nodes)))


@dataclass(frozen=True)
class TournamentMeta:
    """What ``tournament.json`` says (see the module's doc).  What decides
    the games and the ranking is its :attr:`competition`, whole; what an
    older file or one written by hand left out is :attr:`unsaid`."""

    name: str
    bots: tuple[MetaBot, ...]
    #: The game, the seed, the format, its rounds, stages and openings, and the
    #: rules, as the tournament file gave them (:func:`arena.run.results_dir.tournament_meta`);
    #: its names are the bots'.
    competition: Competition
    #: None only in a file written by hand without it.
    time_control: TimeControl | None = None
    description: str = ""
    #: ``arena match --games``: the games the schedule is cut to.
    games: int | None = None
    #: Bots that left, as they were: remembered for their return.
    departed: tuple[MetaBot, ...] = ()
    #: The first stage's seeding, best first, once its first round is paired.
    seeding: tuple[str, ...] = ()
    pairings: tuple[Pairing, ...] = ()
    #: The Ray cluster the last run played on; None for a run on this machine.
    cluster: MetaCluster | None = None
    unsaid: Unsaid = Unsaid()

    def __post_init__(self) -> None:
        if self.competition.names != tuple(bot.name for bot in self.bots):
            # A programming error: the schedule rebuilt would pair other bots than the file lists.
            raise ValueError("TournamentMeta: the competition's names are not the bots'")

    @property
    def names(self) -> list[str]:
        """The tournament's bots, in the file's order."""
        return list(self.competition.names)

    @property
    def versions(self) -> dict[str, str]:
        """Each bot's version, as the run that wrote the file last found it."""
        return {bot.name: bot.version for bot in self.bots if bot.version is not None}

    @property
    def suite_id(self) -> tuple[int, str] | None:
        """What identifies the opening suite: its size and digest; None: the game's start positions."""
        return self.unsaid.suite if self.unsaid.suite is not None else self.competition.suite_id

    def entry(self, name: str) -> MetaBot | None:
        """The bot ``name`` among the bots, else among those that left."""
        return next((bot for bot in (*self.bots, *self.departed) if bot.name == name), None)

    def game_ids(self, played: bool) -> str:
        """How the games are named: as the file says, else (a file written
        before the key) by positions when games were ``played``."""
        if self.unsaid.game_ids:
            return "positions" if played else "names"
        return self.competition.game_ids

    def rebuilt(self, records: Sequence[GameRecord] = ()) -> Competition | None:
        """The competition that rebuilds the schedule; None when the file
        does not say enough.  A file written before it held the opening
        suite's moves gets them from ``records`` (each game id's ``g<k>``
        names its place in the suite)."""
        if self.unsaid.seed or self.unsaid.format:
            return None
        suite = self.competition.openings
        if self.unsaid.suite is not None:
            suite = _suite_from_records(records, self.unsaid.suite[0])
        return replace(self.competition, openings=suite, game_ids=self.game_ids(bool(records)))

    def to_json(self) -> dict[str, Any]:
        data = {
            "name": self.name,
            "description": self.description,
            "time_control": None if self.time_control is None else self.time_control.to_json(),
            "games": self.games,
            "bots": [bot.to_json() for bot in self.bots],
            "departed": [bot.to_json() for bot in self.departed],
            "seeding": list(self.seeding),
            "pairings": [pairing.to_json() for pairing in self.pairings],
            **({} if self.cluster is None else {"cluster": self.cluster.to_json()}),
            **self.competition.to_json(self.unsaid),
        }
        # The keys in the order the file always had them; a key added since, after them.
        return {**{key: data.pop(key) for key in _ORDER if key in data}, **data}

    @classmethod
    def from_json(cls, data: Any) -> TournamentMeta:
        """The record a ``tournament.json`` holds; :class:`MetaError` (one
        line naming the key) when it is not one the arena writes."""
        data = _mapping(data, "the file")
        bots = _bots(data, "bots")
        departed = _bots(data, "departed")
        names = [bot.name for bot in bots]
        if len(set(names)) != len(names):
            raise MetaError("bots: a bot is named twice")
        try:
            stages = tuple(Stage.from_json(_mapping(entry, "stages")) for entry in _list(data.get("stages") or [], "stages"))
            pairings = tuple(pairings_from_json(data.get("pairings") or []))
        except ValueError as exc:
            raise MetaError(f"stages or pairings: {exc}") from None
        if len(pairings) > MAX_FIELD:
            raise MetaError(f"pairings: more than {MAX_FIELD} rounds")
        for pairing in pairings:
            if (problem := pairing_problem(pairing, len(stages))) is not None:
                raise ForgedPairing(f"pairings: {problem}")
        try:
            competition, unsaid = Competition.from_json(data, names, stages)
        except ValueError as exc:
            raise MetaError(str(exc)) from None
        seeding = tuple(_text(n, "seeding", limit=100) for n in _list(data.get("seeding") or [], "seeding"))
        try:
            time_control = None if data.get("time_control") is None else TimeControl.from_json(data["time_control"])
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
            raise MetaError(f"sprt or time_control: {exc}") from None
        return cls(
            name=_text(data.get("name", ""), "name", limit=MAX_TEXT),
            description=_text(data.get("description") or "", "description", limit=MAX_TEXT),
            bots=bots, departed=departed, competition=competition, time_control=time_control,
            games=None if data.get("games") is None else _whole(data["games"], "games", 0, 10**9),
            seeding=seeding, pairings=pairings,
            cluster=None if data.get("cluster") is None else MetaCluster.from_json(data["cluster"]),
            unsaid=unsaid,
        )

    def with_pairing(self, seeding: Sequence[str], pairing: Pairing) -> TournamentMeta:
        """This record with one more round paired (and the seeding it was paired from)."""
        return replace(self, seeding=tuple(seeding), pairings=(*self.pairings, pairing))


def read_meta(directory: Path) -> TournamentMeta | None:
    """The ``tournament.json`` of ``directory``; None when there is none.
    Raises :class:`MetaError` for one that is not one the arena writes (not
    JSON, a field out of bounds), and :class:`~arena.results.store.StoreError`
    for a link, a special file or a file too big in its place (never read)."""
    path = directory / META_FILE
    try:
        data = read_file(directory, META_FILE, MAX_META_BYTES)
    except RefusedFile as exc:  # a link, a FIFO, a device, too big: never read, the directory refused
        raise store_error(exc, "read", path) from None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return None
        raise MetaError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return TournamentMeta.from_json(json.loads(data))
    except ForgedPairing as exc:
        raise ForgedPairing(f"{path}: {exc}") from None
    except (ValueError, RecursionError) as exc:
        problem = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise MetaError(f"{path}: {problem}") from None


def write_meta(directory: Path, meta: TournamentMeta, *, known: TournamentMeta | None = None) -> bool:
    """Write ``meta`` as the ``tournament.json`` of ``directory``, atomically;
    not at all when the file says the same already (``known``, when the
    caller wrote the file itself, else the file read back).  True when
    written; :class:`~arena.results.store.StoreError` (one line) when it cannot be."""
    try:
        if (known if known is not None else read_meta(directory)) == meta:
            return False
    except MetaError:
        pass  # replaced by the record the run decided on
    try:
        write_atomically(directory / META_FILE, _layout(meta.to_json()))
    except OSError as exc:
        raise store_error(exc, "write", directory / META_FILE) from None
    return True


def _layout(data: dict[str, Any]) -> str:
    """``data`` as JSON, a key a line and a list's item a line: readable, and
    each piece made by the C encoder (``indent`` takes the pure-Python one,
    which cost a fifth of a second a round in a 1,000-bot Swiss)."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"    {json.dumps(item)}" for item in value)
            lines.append(f"  {json.dumps(key)}: [\n{items}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


# -- checks of each kind of field -------------------------------------------------------


#: The checks of :mod:`arena.base.json_checks`, each refusal a :class:`MetaError`.
_mapping, _list = partial(mapping, error=MetaError), partial(listed, error=MetaError)
_text, _whole = partial(text, error=MetaError), partial(whole, error=MetaError)


def _line(value: Any, where: str, *, limit: int) -> str:
    """Text printed as it is (a host name at the start of a run): printable, one line."""
    text = _text(value, where, limit=limit)
    if not text.isprintable():
        raise MetaError(f"{where}: must be printable text, got {short(value)}")
    return text


def _bots(data: Mapping[str, Any], key: str) -> tuple[MetaBot, ...]:
    entries = _list(data.get(key) or [], key)
    if len(entries) > MAX_BOTS:
        raise MetaError(f"{key}: {len(entries)} bots, over the {MAX_BOTS} a tournament may have")
    return tuple(MetaBot.from_json(entry, f"{key}[{i}]") for i, entry in enumerate(entries))


def _suite_from_records(records: Sequence[GameRecord], count: int) -> tuple[Opening, ...]:
    suite = [Opening(-1, ())] * count  # a place no record shows matches no game
    for record in records:
        k = record.game_id.rpartition("-g")[2]
        if k.isdigit() and 0 < int(k) <= 2 * count:
            suite[(int(k) - 1) // 2] = Opening(record.opening, tuple(record.opening_moves))
    return tuple(suite)
