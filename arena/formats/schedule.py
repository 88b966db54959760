"""The schedule: which bots play which games, on which seat and start position.

A pure function of the competition, so a rerun (or another process)
rebuilds exactly the same list, and results can be matched to it by game id.

Each round, every pairing meets on every opening twice, back to back, once
with each bot on seat 0 (which moves first): a **game pair**, so no bot
gains from colours or openings.  The openings are the tournament's suite
(``openings:``, see :mod:`arena.game.openings`) or, without one, the game's start
positions.  Round-robin plays every two bots; gauntlet the first bot against
each other one; reference every bot against each bot of the reference set.
Nothing depends on a bot's place in the file, so bots can join, leave or be
reordered without disturbing the games already played.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import overload

from arena.formats.competition import Competition
from arena.formats.game_pairs import add_game_pair, game_seed, pair_game
from arena.game.records import GameRecord, GameSpec, pair_id, parse_game_id
from arena.game.records import game_id as id_in_pair

__all__ = ["FixedSchedule", "ScheduledGames", "make_schedule", "pairings", "schedule_size"]


def pairings(names: Sequence[str], format: str, reference: Sequence[str] = (), *,
             among: Collection[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """The pairs of bots (by name) that meet each round, in playing order.

    Round-robin pairs every two bots; gauntlet the first bot with each other
    one; reference each bot outside ``reference`` with each bot of it.  Each
    pair is in name order (the first takes seat 0 in the pair's first game),
    and the pairs follow a hash of their names: a shuffle that depends on the
    names alone, so neither a bot's place in the file nor a bot that joins or
    leaves changes another pair's games or their order.

    ``among``: only those of these pairs (in name order) the format pairs,
    in the same order; what a reader of a few games of a large field needs,
    at the cost of those pairs rather than of every pair of the field."""
    if among is not None:
        known, ref = set(names), set(reference)
        first = names[0] if names else None
        chosen = [(a, b) for a, b in set(among) if a < b and a in known and b in known and (
            format == "round-robin" or (format == "gauntlet" and first in (a, b))
            or (format == "reference" and (a in ref) != (b in ref)))]
        if format not in ("round-robin", "gauntlet", "reference"):
            raise ValueError(f"unknown format {format!r}")
        return sorted(chosen, key=_pair_order)
    if format == "round-robin":
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    elif format == "gauntlet":
        pairs = [(names[0], other) for other in names[1:]]
    elif format == "reference":
        pairs = [(ref, bot) for bot in names if bot not in reference for ref in reference]
    else:
        raise ValueError(f"unknown format {format!r}")
    return sorted(((min(a, b), max(a, b)) for a, b in pairs), key=_pair_order)


def _pair_order(pair: tuple[str, str]) -> bytes:
    return hashlib.sha256(pair_id(*pair).encode()).digest()


def _pairings_by_position(bot_count: int, format: str) -> list[tuple[int, int]]:
    """The pairs of bot positions (in file order) that meet each round, as
    results directories written before game ids named the bots numbered them."""
    if format == "gauntlet":
        return [(0, j) for j in range(1, bot_count)]
    if format == "round-robin":
        return [(i, j) for i in range(bot_count) for j in range(i + 1, bot_count)]
    raise ValueError(f"unknown format {format!r}")


def schedule_size(competition: Competition) -> int:
    """The games :func:`make_schedule` gives, counted without making them."""
    n = len(competition.names)
    if competition.format == "round-robin":
        pairs = n * (n - 1) // 2
    elif competition.format == "gauntlet":
        pairs = max(n - 1, 0)
    else:
        reference = competition.rules.reference
        pairs = len(reference) * sum(1 for name in competition.names if name not in reference)
    return competition.rounds * pairs * 2 * len(competition.suite())


def make_schedule(competition: Competition, versions: Mapping[str, str] | None = None, *,
                  among: Collection[tuple[str, str]] | None = None) -> list[GameSpec]:
    """Every game of the tournament in playing order: round by round, pair by
    pair (see :func:`pairings`); within a pair, opening by opening, the
    pair's first bot on seat 0 then the second.  Game ids read
    ``r<round>-<first>~<second>-g<k>``, ``k`` counting from 1 within the pair
    and round: a game's id, and so its seed, depend on the bots' names, the
    round and the opening, never on the bots' places in the file.

    Results directories written before (``game_ids: positions`` in their
    ``tournament.json``) keep their ids ``r<round>-p<pair>-g<k>``, the pair
    numbered from 1 in file order.  ``versions`` (bot name to version) are
    written into each spec, and from there into its record.

    ``among`` (pairs of bots in name order): the schedule of those pairs
    only, each game's ``index`` its place among their games, in the same
    order as in the whole schedule (ratings fold alike).  Not for ids by
    position: ``ValueError``."""
    names = competition.names
    if competition.game_ids == "positions":
        if among is not None:
            raise ValueError("game ids by position name no pair: only the whole schedule holds them")
        pairs = [(f"p{n}", (names[i], names[j]))
                 for n, (i, j) in enumerate(_pairings_by_position(len(names), competition.format), start=1)]
    else:
        pairs = [(pair_id(a, b), (a, b))
                 for a, b in pairings(names, competition.format, competition.rules.reference, among=among)]
    specs: list[GameSpec] = []
    suite = competition.suite()  # (made anew on each call: a tenth of a million games' schedule)
    for round_ in range(1, competition.rounds + 1):
        for label, players in pairs:
            for j, opening in enumerate(suite):
                add_game_pair(specs, competition, round_, label, players, opening, j, versions)
    return specs


class ScheduledGames:
    """The games of the schedule of ``competition`` (by names), each found
    from its id alone: what a reader of a stream of records needs, who
    never makes the whole schedule (a million games).  Each pair the
    format pairs is worked out once."""

    #: The most pairs remembered (a field of a thousand bots has half a million).
    MAX_PAIRS = 100_000

    def __init__(self, competition: Competition) -> None:
        self.competition = competition
        self._suite = competition.suite()
        self._pairs: dict[tuple[str, str], bytes | None] = {}

    @staticmethod
    def order(game_id: str) -> tuple[int, bytes, int] | None:
        """Where the game ``game_id`` names comes in the schedule's playing
        order (round, pair, then its number within them), as a key that
        sorts as :func:`make_schedule`'s ``index`` does, whatever pairs the
        schedule holds besides; None for an id no schedule by names gives."""
        parsed = parse_game_id(game_id)
        if parsed is None:
            return None
        round_, a, b, k = parsed
        return round_, _pair_order((a, b)), k

    def match(self, record: GameRecord, rounds: int) -> tuple[bool, tuple[int, bytes, int]] | None:
        """Whether ``record`` is the game its id names in the schedule over
        ``rounds`` rounds (what :func:`make_schedule` makes of it: the same
        seed, opening and seats, :meth:`GameRecord.is_game`), and that game's
        :meth:`order`; None when that schedule holds no such game.  Without
        making the game's spec: a first read of a league asks it of every record."""
        parsed = parse_game_id(record.game_id)
        competition = self.competition
        if parsed is None or competition.game_ids == "positions":
            return None
        round_, a, b, k = parsed
        j, seat = divmod(k - 1, 2)
        if not (1 <= round_ <= rounds and 0 <= j < len(self._suite)):
            return None
        pair = (a, b)
        if pair in self._pairs:
            order = self._pairs[pair]
        else:
            paired = pairings(competition.names, competition.format, competition.rules.reference, among=[pair])
            order = _pair_order(pair) if paired else None
            if len(self._pairs) >= self.MAX_PAIRS:
                self._pairs.clear()
            self._pairs[pair] = order
        if order is None:
            return None
        opening = self._suite[j]
        same = record.is_game(game_seed(competition.seed, record.game_id), opening.start, opening.moves,
                              pair if seat == 0 else (b, a))
        return same, (round_, order, k)


class FixedSchedule(Sequence[GameSpec]):
    """What :func:`make_schedule` gives of ``competition`` (a format fixed in
    advance, its games named by the bots), the same specs in the same order,
    made only when asked for: a resumed league of a million games needs its
    length, where each recorded game goes (:meth:`place`, from its id) and
    the games of the rounds not complete yet (:meth:`pending`), not the
    million specs."""

    def __init__(self, competition: Competition, versions: Mapping[str, str] | None = None) -> None:
        if competition.game_ids != "names" or competition.paired_by_results:
            raise ValueError("only a schedule fixed in advance, by names, is known from its ids")
        self.competition, self.versions = competition, versions
        self._pairs = pairings(competition.names, competition.format, competition.rules.reference)
        self._position = {pair: p for p, pair in enumerate(self._pairs)}
        self._suite = competition.suite()
        #: The games of one round: every pair's game pairs, one on each opening.
        self.per_round = len(self._pairs) * 2 * len(self._suite)

    def __len__(self) -> int:
        return self.competition.rounds * self.per_round

    @overload
    def __getitem__(self, item: int) -> GameSpec: ...
    @overload
    def __getitem__(self, item: slice) -> list[GameSpec]: ...
    def __getitem__(self, item: int | slice) -> GameSpec | list[GameSpec]:
        if isinstance(item, slice):
            return [self._spec(i) for i in range(*item.indices(len(self)))]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return self._spec(item)

    def __iter__(self) -> Iterator[GameSpec]:
        for round_ in range(1, self.competition.rounds + 1):
            yield from self.round(round_)

    def round(self, round_: int) -> list[GameSpec]:
        """The games of round ``round_`` (from 1), in playing order."""
        first = (round_ - 1) * self.per_round
        return [self._spec(index) for index in range(first, first + self.per_round)]

    def _spec(self, index: int) -> GameSpec:
        round_, within = divmod(index, self.per_round)
        position, k = divmod(within, 2 * len(self._suite))
        j, seat = divmod(k, 2)
        a, b = self._pairs[position]
        return pair_game(self.competition, round_ + 1, pair_id(a, b), (a, b), self._suite[j], j, seat, index,
                         self.versions)

    def game_id_at(self, index: int) -> str:
        """The id of the game at ``index`` (its spec not made)."""
        round_, within = divmod(index, self.per_round)
        position, k = divmod(within, 2 * len(self._suite))
        return id_in_pair(round_ + 1, pair_id(*self._pairs[position]), k + 1)

    def index_of(self, game_id: str) -> int | None:
        """The place in this schedule of the game ``game_id`` names; None when it holds no such id."""
        parsed = parse_game_id(game_id)
        if parsed is None:
            return None
        round_, a, b, k = parsed
        position = self._position.get((a, b))
        games = 2 * len(self._suite)
        if position is None or not (1 <= round_ <= self.competition.rounds and 1 <= k <= games):
            return None
        return ((round_ - 1) * len(self._pairs) + position) * games + k - 1

    def place(self, record: GameRecord) -> tuple[bool, int, int, int] | None:
        """Whether ``record`` is of the game its id names here (the same
        seed, opening and seats: :func:`~arena.results.reading.same_game`),
        and that game's index, pair and round; None when this schedule holds
        no such id.  Without making the game's spec."""
        index = self.index_of(record.game_id)
        if index is None:
            return None
        round_, within = divmod(index, self.per_round)
        position, k = divmod(within, 2 * len(self._suite))
        j, seat = divmod(k, 2)
        a, b = self._pairs[position]
        opening = self._suite[j]
        same = record.is_game(game_seed(self.competition.seed, record.game_id), opening.start, opening.moves,
                              (a, b) if seat == 0 else (b, a))
        return same, index, index // 2, round_ + 1

    def pending(self, records: Collection[GameRecord]) -> list[GameSpec]:
        """The games not in ``records`` (games of this schedule, each once,
        their rounds the schedule's: see :func:`~arena.results.reading.sort_records`),
        in playing order: a round that holds all its games is passed over by
        its count, its specs never made."""
        done = Counter(record.round for record in records)
        return self.pending_of(done, {record.game_id for record in records if done[record.round] < self.per_round})

    def pending_of(self, done: Mapping[int, int], ids: Collection[str]) -> list[GameSpec]:
        """:meth:`pending`, from the games each round holds (``done``, a
        count) and the ids of those in the rounds not complete (``ids``)."""
        return [spec for round_ in range(1, self.competition.rounds + 1) if done.get(round_, 0) < self.per_round
                for spec in self.round(round_) if spec.game_id not in ids]
