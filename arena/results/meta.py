"""``tournament.json``: what a results directory says of its tournament.

:class:`TournamentMeta` is the one typed record of that file and this module
its only reader and writer.  It holds everything needed to rebuild the
schedule and the ranking without the tournament file: the tournament's
:class:`~arena.formats.competition.Competition` whole (the game, the seed,
the format and its stages, the opening suite's moves, the rules), the
clock, the bots with their versions and fingerprints, the bots that left,
and for a Swiss, knockout or staged tournament the seeding and every round
paired so far.

The file is input like the records (anyone may edit or forge it), so it is
decoded typed (msgspec, into these records and
:class:`~arena.formats.competition.CompetitionEntry`), every field checked
and every size bounded as it is read, and what no type says checked after: a
file over :data:`MAX_META_BYTES`, more than :data:`MAX_BOTS` bots or an
opening suite over :data:`MAX_SUITE` openings is refused with one line
naming the file and the field (:class:`MetaError`), never a hang or an
exhausted memory.  Every pairing
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
from pathlib import Path
from typing import Annotated, Any

import msgspec

from arena.base.safe_files import RefusedFile, read_file
from arena.formats.competition import MAX_SUITE, BotName, Competition, CompetitionEntry, Unsaid
from arena.formats.stages import MAX_FIELD, Pairing, pairing_problem
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

    name: BotName
    options: Mapping[str, Any] = field(default_factory=dict)
    version: BotName | None = None
    #: Its :class:`arena.bot.version.Fingerprint` as JSON: what its version was computed from.
    fingerprint: Mapping[str, Any] | None = None
    #: Versions whose games were kept (``--keep``) though another version plays now.
    earlier_versions: tuple[BotName, ...] = ()
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


@dataclass(frozen=True)
class MetaNode:
    """A node of the Ray cluster a run played on, as Ray listed it at the
    start; on a calibrated cluster, its ``speed`` over the driver's machine's."""

    host: Annotated[str, msgspec.Meta(max_length=253)]
    node_id: Annotated[str, msgspec.Meta(max_length=128)]
    cpus: Annotated[float, msgspec.Meta(ge=0, le=MAX_CPUS)]
    speed: Annotated[float, msgspec.Meta(gt=0, le=MAX_RATIO)] | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"host": self.host, "node_id": self.node_id, "cpus": self.cpus}
        if self.speed is not None:
            entry["speed"] = self.speed
        return entry


@dataclass(frozen=True)
class MetaCluster:
    """The Ray cluster the last run played on: its nodes at the start, and
    the driver's Python and Ray (Ray refuses nodes with others)."""

    python: Annotated[str, msgspec.Meta(max_length=100)]
    ray: Annotated[str, msgspec.Meta(max_length=100)]
    nodes: Annotated[tuple[MetaNode, ...], msgspec.Meta(max_length=MAX_NODES)]

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
        """The record a ``tournament.json`` holds, given as Python values
        (:func:`read_meta` decodes the file's bytes); :class:`MetaError`
        (one line naming the key) when it is not one the arena writes."""
        try:
            entry = msgspec.convert(data, _MetaEntry)
        except msgspec.ValidationError as exc:
            raise MetaError(_where_first(exc)) from None
        return entry.meta()

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
        return _decode(data).meta()
    except ForgedPairing as exc:
        raise ForgedPairing(f"{path}: {exc}") from None
    except msgspec.ValidationError as exc:
        raise MetaError(f"{path}: {_where_first(exc)}") from None
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


# -- the file as msgspec decodes it ----------------------------------------------------


class _MetaEntry(CompetitionEntry, frozen=True):
    """``tournament.json`` as its keys are typed: the competition's
    (:class:`CompetitionEntry`), and the record's own.  A key of a later
    version is ignored; null stands for a list left empty."""

    name: Annotated[str, msgspec.Meta(max_length=MAX_TEXT)] = ""
    description: Annotated[str, msgspec.Meta(max_length=MAX_TEXT)] | None = None
    time_control: TimeControl | None = None
    games: Annotated[int, msgspec.Meta(ge=0, le=10**9)] | None = None
    bots: Annotated[tuple[MetaBot, ...], msgspec.Meta(max_length=MAX_BOTS)] | None = None
    departed: Annotated[tuple[MetaBot, ...], msgspec.Meta(max_length=MAX_BOTS)] | None = None
    seeding: tuple[BotName, ...] | None = None
    pairings: Annotated[tuple[Pairing, ...], msgspec.Meta(max_length=MAX_FIELD)] | None = None
    cluster: MetaCluster | None = None

    def meta(self) -> TournamentMeta:
        """The record, checked for what no type says: a bot named twice,
        pairings out of order or forged, the competition's own checks, a
        cluster's names that would not print as they are."""
        bots = self.bots or ()
        names = [bot.name for bot in bots]
        if len(set(names)) != len(names):
            raise MetaError("bots: a bot is named twice")
        try:
            competition, unsaid = self.competition(names)
        except ValueError as exc:
            raise MetaError(str(exc)) from None
        pairings = self.pairings or ()
        if [pairing.round for pairing in pairings] != list(range(1, len(pairings) + 1)):
            raise MetaError("pairings: must number their rounds 1, 2, 3, ...")
        for pairing in pairings:
            if (problem := pairing_problem(pairing, len(competition.stages))) is not None:
                raise ForgedPairing(f"pairings: {problem}")
        if self.cluster is not None:
            _printable(self.cluster)
        return TournamentMeta(
            name=self.name, description=self.description or "", bots=bots, departed=self.departed or (),
            competition=competition, time_control=self.time_control, games=self.games,
            seeding=self.seeding or (), pairings=pairings, cluster=self.cluster, unsaid=unsaid,
        )


_decode = msgspec.json.Decoder(_MetaEntry).decode


def _where_first(exc: msgspec.ValidationError) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.bots[0].seats```
    as the arena's other refusals read: ``bots[0].seats: Expected ...``."""
    problem, at, where = str(exc).rpartition(" - at `$")
    if not at:
        return where
    return f"{where.rstrip('`').lstrip('.')}: {problem}"


def _printable(cluster: MetaCluster) -> None:
    """Text printed as it is (a host name at the start of a run): printable, one line."""
    named = [("cluster.python", cluster.python), ("cluster.ray", cluster.ray)]
    for i, node in enumerate(cluster.nodes):
        named += [(f"cluster.nodes[{i}].host", node.host), (f"cluster.nodes[{i}].node_id", node.node_id)]
    for where, text in named:
        if not text.isprintable():
            raise MetaError(f"{where}: must be printable text, got {text[:60]!r}")


def _suite_from_records(records: Sequence[GameRecord], count: int) -> tuple[Opening, ...]:
    suite = [Opening(-1, ())] * count  # a place no record shows matches no game
    for record in records:
        k = record.game_id.rpartition("-g")[2]
        if k.isdigit() and 0 < int(k) <= 2 * count:
            suite[(int(k) - 1) // 2] = Opening(record.opening, tuple(record.opening_moves))
    return tuple(suite)
