"""The rounds of a Swiss, knockout or staged tournament, read from the
pairings stored in ``tournament.json`` and the games played.

A round is paired once, when the rounds before it are complete, and its
pairing is written to ``tournament.json`` before its first game starts
(:mod:`arena.formats.progression` makes it).  From then on the pairing is a fact
of the tournament, as an arbiter's pairing sheet is: a bot that joins later,
or a game played again, never re-pairs a round already paired.  Reading the
rounds (who scored what, which knockout match needs another game pair, who
won it, the places) needs the pairings and the records only, so every
command reads a results directory the same way; a run keeps them as its
games come, each record folded once into its pairing or match
(:class:`RoundsFold`), and reading everything anew is that fold over every
record.  Pure: no I/O.

Units: a Swiss pairing is one game pair (both colours, the same opening);
a knockout match is ``games_per_match`` game pairs, and a tied match adds
game pairs up to ``tiebreak_pairs``, after which the better seed goes
through.  The ``j``-th game pair (from 0) of a pairing in round ``r`` plays
the suite's opening ``(r - 1 + j) mod len(suite)``: every pairing of a
round on the same opening, each round on the next.  A round-robin stage's
pairing plays the whole suite, a game pair per opening, as a round-robin
tournament's round does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from arena.game.records import GameRecord
from arena.formats.adaptive import Fit, Verdict, fit, in_scope, ranking, verdicts
from arena.formats.game_pairs import game_ids
from arena.formats.pairing import bracket_slots, knockout_places, knockout_rounds
from arena.formats.scoring import buchholz, score_of, sonneborn_berger, tiebreak_order
from arena.formats.stages import BYE_SCORES, Pairing, Stage

__all__ = ["Match", "PairResult", "Rounds", "RoundsFold", "StageState", "pairs_per_pairing", "read_rounds"]

#: The stage formats scored by points, with Buchholz and Sonneborn–Berger.
_POINTS_FORMATS = ("swiss", "round-robin")


def pairs_per_pairing(stage: Stage, suite_size: int) -> int:
    """The game pairs a Swiss or round-robin pairing plays in a round."""
    return suite_size if stage.format == "round-robin" else 1


@dataclass
class Match:
    """A knockout match, its bots in bracket order; a bye has no ``bots[1]``."""

    round: int
    bots: tuple[str, str | None]
    #: Each bot's seed in the knockout (1 is the best).
    seeds: tuple[int, int | None]
    #: Game pairs scheduled so far: ``games_per_match``, plus tie-break pairs while tied.
    pairs: int = 0
    #: The games of the match that are recorded, in order.
    games: list[str] = field(default_factory=list)
    score: tuple[float, float] = (0.0, 0.0)
    winner: str | None = None
    #: How it was decided: ``bye``, ``score``, ``tie-break`` (won in the
    #: tie-break pairs), ``seed`` (still tied after them: the better seed),
    #: ``walkover`` (the other bot left the tournament); empty while it is played.
    decided_by: str = ""

    @property
    def loser(self) -> str | None:
        if self.winner is None:
            return None
        return self.bots[1] if self.winner == self.bots[0] else self.bots[0]


@dataclass
class PairResult:
    """A Swiss or round-robin pairing in its round: its games recorded so
    far, in order, and each bot's score in them (in the pairing's order)."""

    games: list[str] = field(default_factory=list)
    score: tuple[float, float] = (0.0, 0.0)
    #: Every game it has is recorded.
    played: bool = False
    #: Both bots are still in the tournament; a pairing with a bot removed
    #: since keeps its games on show but scores nothing.
    counted: bool = True
    #: Its games lost by forfeit, in order: (the bot that forfeited, the reason).
    forfeits: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class StageState:
    """One stage as far as it has been played."""

    number: int
    stage: Stage
    #: Its bots, seeded (the best seed first).
    field: list[str]
    #: Its rounds, as paired so far.
    pairings: list[Pairing] = field(default_factory=list)
    #: The rounds it will have in all.
    total_rounds: int = 0
    #: Every paired round is played (and each of its knockout matches decided).
    played: bool = True
    #: Swiss and round-robin: each bot's points, a bye's included; the bye points alone.
    points: dict[str, float] = field(default_factory=dict)
    bye_points: dict[str, float] = field(default_factory=dict)
    #: Swiss and round-robin: (a, b) -> a's points against b in this stage.
    pair_points: dict[tuple[str, str], float] = field(default_factory=dict)
    #: Swiss and round-robin: each bot's opponents in this stage (those of ``pair_points``).
    opponents: dict[str, set[str]] = field(default_factory=dict)
    #: Swiss and round-robin: each pairing's games and score, by (round, a, b)
    #: as paired; none for a pairing with a bot that left (it plays nothing).
    results: dict[tuple[int, str, str], PairResult] = field(default_factory=dict)
    #: Knockout: its matches, round by round.
    matches: list[list[Match]] = field(default_factory=list)
    #: Knockout: each bot's place, as the range it shares ((3, 4) for a semi-final loser).
    places: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Adaptive: the Bradley–Terry fit of its games, its bots still in play by
    #: rating, the verdict on each adjacent pair of those, and the games its
    #: rounds have scheduled so far.
    model: Fit | None = None
    in_play: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    spent: int = 0

    @cached_property
    def buchholz(self) -> dict[str, float]:
        """Swiss and round-robin: each bot's Buchholz (summed when asked: a run pairs without it)."""
        return buchholz(self.pair_points, self.points) if self.stage.format in _POINTS_FORMATS else {}

    @cached_property
    def sonneborn_berger(self) -> dict[str, float]:
        """Swiss and round-robin: each bot's Sonneborn–Berger."""
        return sonneborn_berger(self.pair_points, self.points) if self.stage.format in _POINTS_FORMATS else {}

    @property
    def settled(self) -> bool:
        """Adaptive: every adjacent pair the stop rule looks at is settled."""
        return all(v.settled for v in in_scope(self.verdicts, self.stage.settle_top))

    @property
    def complete(self) -> bool:
        """Every round it will have is paired and played."""
        return self.played and len(self.pairings) >= self.total_rounds

    @property
    def order(self) -> list[str]:
        """Its bots from the best: by places in a knockout (then seed), by
        points, Buchholz, Sonneborn–Berger and seed otherwise."""
        seed = {b: i for i, b in enumerate(self.field)}
        if self.stage.format == "knockout":
            # The bots still in (no place yet) above every bot knocked out, the furthest on first.
            return sorted(self.field, key=lambda b: (self.places.get(b) or (0, self.lowest_place(b)), seed[b]))
        if self.stage.format == "adaptive" and self.model is not None:
            # A bot taken out of the tournament has no rating: after the others (places() drops it).
            rated = [b for b in self.field if b in self.model.elo]
            return ranking(rated, self.model) + [b for b in self.field if b not in self.model.elo]
        return tiebreak_order(self.field, self.points, self.buchholz, self.sonneborn_berger)

    def round_name(self, index: int) -> str:
        """A knockout round's name by the bots it leaves (``index`` from 0):
        ``final``, ``semi-finals``, ``quarter-finals``, ``round of 16``, ..."""
        left = 2 ** (self.total_rounds - index)
        return {2: "final", 4: "semi-finals", 8: "quarter-finals"}.get(left, f"round of {left}")

    def lowest_place(self, bot: str) -> int:
        """Knockout: the lowest place ``bot``, still in, can end in: that of the
        losers of the round it plays now, or of the next once it won its match
        (a semi-finalist 4th at worst, a bot still in the quarter-finals 8th)."""
        reached = 0
        for index, matches in enumerate(self.matches):
            for match in matches:
                if bot in match.bots:
                    reached = index + (match.winner == bot)
        return min(2 ** (self.total_rounds - reached), len(self.field))

    def winners(self, round_index: int) -> list[str]:
        return [m.winner for m in self.matches[round_index] if m.winner is not None]


@dataclass
class Rounds:
    """A Swiss, knockout or staged tournament as far as it has been played."""

    stages: list[StageState]
    #: Every round paired so far, through the stages.
    pairings: list[Pairing]
    #: The stages the tournament has, those not reached yet included.
    stage_count: int = 0
    #: The bots still in the tournament; None: every bot paired.
    present: frozenset[str] | None = None
    #: The bots withdrawn, by their games or by the tournament file: no later round pairs them.
    out_of_play: frozenset[str] = frozenset()

    @property
    def finished(self) -> bool:
        return all(stage.complete for stage in self.stages) and len(self.stages) > 0

    @property
    def current(self) -> StageState:
        """The stage being played (the last one, once all are)."""
        return next((s for s in self.stages if not s.complete), self.stages[-1])

    def describe(self) -> str:
        """Where the tournament is, for a progress line: ``round 3 of 7``,
        ``round 8: stage 2 (knockout), 1 of 3``."""
        state = self.current
        if state.stage.format == "adaptive":
            where = f"stage {state.number} (adaptive), " if max(len(self.stages), self.stage_count) > 1 else ""
            return f"round {len(self.pairings)}: {where}{state.spent:,} of at most {state.stage.max_games:,} games"
        total = max(state.total_rounds, len(state.pairings))
        if max(len(self.stages), self.stage_count) > 1:
            # The tables number rounds through the stages: say both.  A game
            # of an earlier stage played again (--replay-game) is in that
            # stage's last round, not in the last round paired.
            number = state.pairings[-1].round if state.pairings else len(self.pairings)
            return f"round {number}: stage {state.number} ({state.stage.format}), {len(state.pairings)} of {total}"
        return f"round {len(state.pairings)} of {total}"

    @property
    def bye_points(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for stage in self.stages:
            for bot, points in stage.bye_points.items():
                out[bot] = out.get(bot, 0.0) + points
        return out

    def places(self) -> list[tuple[str, tuple[int, int]]]:
        """Every bot still in the tournament with the places it shares, from
        the best: the last stage reached decides, each earlier stage places
        those it knocked out.  A bot removed from the tournament takes no
        place: the bots below it move up (a removed champion leaves the
        finalist first)."""
        placed: list[tuple[str, tuple[int, int]]] = []
        seen: set[str] = set()
        for stage in reversed(self.stages):
            start = len(seen)
            order = [b for b in stage.order if b not in seen]
            for i, bot in enumerate(order):
                if stage.stage.format == "knockout" and bot in stage.places:
                    first, last = stage.places[bot]
                    placed.append((bot, (start + first, start + last)))
                elif stage.stage.format == "knockout":
                    # From the first down to the place of those its round knocks out: a
                    # bot still in the quarter-finals may still go out there, to 5–8.
                    placed.append((bot, (start + 1, start + stage.lowest_place(bot))))
                else:
                    placed.append((bot, (start + i + 1, start + i + 1)))
            seen.update(order)
        if self.present is None:
            return placed
        removed = [place for bot, place in placed if bot not in self.present]
        return [(bot, (first - sum(r[0] < first for r in removed), last - sum(r[0] <= last for r in removed)))
                for bot, (first, last) in placed if bot in self.present]


def read_rounds(
    stages: Sequence[Stage],
    seeding: Sequence[str],
    pairings: Sequence[Pairing],
    records: Iterable[GameRecord],
    suite_size: int,
    present: Iterable[str] | None = None,
    out_of_play: Collection[str] = (),
) -> Rounds:
    """The rounds ``pairings`` made, with the results of ``records`` (the
    games played, by id): :class:`RoundsFold` over them all.  ``seeding`` is
    the first stage's field in seeding order; ``present`` the bots still in
    the tournament (default: all), so that a pairing with a bot that left
    counts for nothing (a knockout match: a walkover); ``out_of_play`` the
    bots withdrawn, which an adaptive stage's stop rule no longer waits for."""
    fold = RoundsFold(stages, seeding, suite_size, present)
    for pairing in pairings:
        fold.pair(pairing)
    for record in records:
        fold.add(record)
    return fold.rounds(out_of_play)


class RoundsFold:
    """The rounds of a Swiss, knockout or staged tournament, kept up to date
    as its pairings and games come: each record is folded once, into the
    pairing or match it belongs to, in whatever order records and pairings
    come (a resumed run reads the records in the file's order, a game played
    again comes late; a game recorded twice counts as its later record).
    :meth:`rounds` then takes time that grows with the bots, not the games,
    so a run that reads its rounds after every game does not slow down as
    they add up.  The rounds it gives share their tables of results
    (``results``, ``pair_points``, ``opponents``, ``matches``) with the
    fold, which later records update: read them before folding more."""

    def __init__(self, stages: Sequence[Stage], seeding: Sequence[str], suite_size: int,
                 present: Iterable[str] | None = None) -> None:
        self.stages = list(stages)
        self.seeding = list(seeding)
        self.here = set(self.seeding if present is None else present)
        self.present = None if present is None else frozenset(self.here)
        self.pairings: list[Pairing] = []
        #: The records folded, by game id.
        self.by_id: dict[str, GameRecord] = {}
        self._stages = [_KnockoutFold(stage, self.here) if stage.format == "knockout"
                        else _AdaptiveFold(stage, self.here) if stage.format == "adaptive"
                        else _PointsFold(stage, self.here, pairs_per_pairing(stage, suite_size))
                        for stage in self.stages]
        # Each game id a pairing schedules (a knockout match's tie-breaks included): where it counts.
        self._slots: dict[str, tuple[_StageFold, Any]] = {}

    def pair(self, pairing: Pairing) -> None:
        """Fold a round as it was paired (the next one: rounds come in order)."""
        self.pairings.append(pairing)
        if not 1 <= pairing.stage <= len(self._stages):
            return
        fold = self._stages[pairing.stage - 1]
        for key, ids in fold.pair(pairing):
            for game_id in ids:
                self._slots[game_id] = (fold, key)
            if any(game_id in self.by_id for game_id in ids):
                fold.refresh(key, self.by_id)

    def add(self, record: GameRecord) -> None:
        """Fold one game's record."""
        self.by_id[record.game_id] = record
        slot = self._slots.get(record.game_id)
        if slot is not None:
            slot[0].refresh(slot[1], self.by_id)

    def rounds(self, out_of_play: Collection[str] = ()) -> Rounds:
        """The rounds as far as they are paired and played; ``out_of_play``:
        see :func:`read_rounds`."""
        out = frozenset(out_of_play)
        states: list[StageState] = []
        for number, (stage, fold) in enumerate(zip(self.stages, self._stages), start=1):
            if number == 1:
                field_ = list(self.seeding)
            else:
                before = states[-1]
                if not before.complete and not fold.pairings:
                    # A stage is paired once the one before is complete; paired,
                    # it stands even when a game of the stage before is played
                    # again (an arbiter's pairing sheet is not redrawn).
                    break
                # Once the stage is paired, its field is the bots it was paired
                # with, whoever has left or been withdrawn since.
                if not fold.pairings:
                    field_ = [b for b in before.order if b in self.here][: stage.top]
                elif stage.format == "knockout":
                    field_ = []  # the bracket's (below)
                else:
                    field_ = [b for b in before.order if b in fold.paired]
            state = StageState(number, stage, field_, list(fold.pairings))
            fold.read(state, out)
            states.append(state)
        return Rounds(states, list(self.pairings), len(self.stages), self.present, out)


class _StageFold(ABC):
    """One stage's share of a :class:`RoundsFold`."""

    def __init__(self, stage: Stage, here: set[str]) -> None:
        self.stage, self.here = stage, here
        self.pairings: list[Pairing] = []
        #: Every bot its rounds pair (a Swiss bye included).
        self.paired: set[str] = set()

    def _take(self, pairing: Pairing) -> None:
        self.pairings.append(pairing)
        self.paired.update(b for pair in pairing.pairs for b in pair if b is not None)
        self.paired.update(pairing.byes)

    @abstractmethod
    def pair(self, pairing: Pairing) -> list[tuple[Any, list[str]]]:
        """Take the round ``pairing``; each of its pairings or matches (a key
        for :meth:`refresh`) with the ids of the games it may have."""

    @abstractmethod
    def refresh(self, key: Any, by_id: Mapping[str, GameRecord]) -> None:
        """Read the pairing or match ``key`` anew: a game of it was recorded."""

    @abstractmethod
    def read(self, state: StageState, out: frozenset[str]) -> None:
        """Fill ``state``, whose field the stages before give, from the fold."""


class _Tally:
    """A stage's points: each bot's, each bot's against each opponent, and
    each bot's opponents, kept as each pairing's score changes (points count
    in halves: the sums are exact in any order, as when summed anew)."""

    def __init__(self) -> None:
        self.points: dict[str, float] = {}
        self.pair_points: dict[tuple[str, str], float] = {}
        self.opponents: dict[str, set[str]] = {}

    def credit(self, a: str, b: str, da: float, db: float) -> None:
        """``a`` and ``b`` have played a game against each other, and scored
        ``da`` and ``db`` more than before in their pairing."""
        pp = self.pair_points
        if (a, b) not in pp:
            pp[(a, b)] = pp[(b, a)] = 0.0
            self.opponents.setdefault(a, set()).add(b)
            self.opponents.setdefault(b, set()).add(a)
        pp[(a, b)] += da
        pp[(b, a)] += db
        self.add(a, da)
        self.add(b, db)

    def add(self, bot: str, delta: float) -> None:
        """``bot`` scored ``delta`` more (a game, a bye)."""
        self.points[bot] = self.points.get(bot, 0.0) + delta


def _pair_result(ids: Sequence[str], by_id: Mapping[str, GameRecord], a: str, b: str, counted: bool,
                 forfeits: bool) -> PairResult:
    """A pairing's games among ``ids`` that are recorded, and its score."""
    result = PairResult(counted=counted)
    for game_id in ids:
        record = by_id.get(game_id)
        if record is None:
            continue
        result.games.append(game_id)
        if forfeits and record.forfeit_by is not None:
            result.forfeits.append((record.players[record.forfeit_by], record.reason))
        result.score = (result.score[0] + score_of(record, a), result.score[1] + score_of(record, b))
    result.played = len(result.games) == len(ids)
    return result


class _PointsFold(_StageFold):
    """A Swiss or round-robin stage: each pairing's games and score, the
    bots' points and tie-breaks."""

    def __init__(self, stage: Stage, here: set[str], pairs: int) -> None:
        super().__init__(stage, here)
        self.pairs = pairs
        self.tally = _Tally()
        self.results: dict[tuple[int, str, str], PairResult] = {}
        self.bye_points: dict[str, float] = {}
        self._ids: dict[tuple[int, str, str], list[str]] = {}
        #: The games of its counted pairings not recorded yet.
        self.missing = 0

    def pair(self, pairing: Pairing) -> list[tuple[Any, list[str]]]:
        self._take(pairing)
        slots = []
        for a, b in pairing.pairs:
            assert b is not None  # a knockout's bye has none
            key = (pairing.round, a, b)
            counted = a in self.here and b in self.here
            self.results[key] = PairResult(counted=counted)
            ids = self._ids[key] = game_ids(pairing.round, a, b, self.pairs)
            # A removed bot's pairing is never played.
            self.missing += len(ids) if counted else 0
            slots.append((key, ids))
        self._byes(pairing.byes)
        return slots

    def _byes(self, byes: Iterable[str]) -> None:
        bye_value = BYE_SCORES[self.stage.bye] * 2  # a game pair's
        for bot in byes:
            if bot in self.here:  # a bot that left: out of the ranking, byes too
                self.tally.add(bot, bye_value)
                self.bye_points[bot] = self.bye_points.get(bot, 0.0) + bye_value

    def refresh(self, key: Any, by_id: Mapping[str, GameRecord]) -> None:
        self._refresh(key, by_id, forfeits=True)

    def _refresh(self, key: tuple[int, str, str], by_id: Mapping[str, GameRecord], forfeits: bool) -> PairResult:
        """The pairing ``key`` read anew; returns it as it was."""
        _, a, b = key
        before = self.results[key]
        result = self.results[key] = _pair_result(self._ids[key], by_id, a, b, before.counted, forfeits)
        if result.counted and result.games:
            self.missing -= len(result.games) - len(before.games)
            self.tally.credit(a, b, result.score[0] - before.score[0], result.score[1] - before.score[1])
        return before

    def read(self, state: StageState, out: frozenset[str]) -> None:
        state.total_rounds = self.stage.rounds
        state.played = self.missing == 0
        self._read_points(state)
        state.bye_points = dict(self.bye_points)

    def _read_points(self, state: StageState) -> None:
        state.points = {b: 0.0 for b in state.field} | self.tally.points
        state.pair_points, state.results = self.tally.pair_points, self.results
        state.opponents = self.tally.opponents


class _AdaptiveFold(_PointsFold):
    """An adaptive stage: its results, fit and verdicts.  It is complete
    once the stop rule holds, or when another game pair would pass
    ``max_games``: its rounds are then all it has.

    The fit is of the rounds whose games are all in: a round is the unit
    the stop rule and the next pairing look at, and a run reads the stage
    after every game, which would otherwise fit it again after every game
    (a second at 1,000 bots)."""

    def __init__(self, stage: Stage, here: set[str]) -> None:
        super().__init__(stage, here, 1)
        self.spent = 0
        #: Per round: its games not recorded yet, and its pairings.
        self._round_missing: dict[int, int] = {}
        self._round_keys: dict[int, list[tuple[int, str, str]]] = {}
        #: (a, b) with a < b -> a's points and the games, over the rounds complete.
        self._results: dict[tuple[str, str], tuple[float, int]] = {}
        self._fit: tuple[tuple[str, ...], Fit] | None = None

    def pair(self, pairing: Pairing) -> list[tuple[Any, list[str]]]:
        missing = self.missing
        slots = super().pair(pairing)
        self.spent += self.missing - missing
        self._round_missing[pairing.round] = self.missing - missing
        self._round_keys[pairing.round] = [key for key, _ in slots]
        return slots

    def _byes(self, byes: Iterable[str]) -> None:
        """The bot an odd round leaves out scores nothing."""

    def refresh(self, key: Any, by_id: Mapping[str, GameRecord]) -> None:
        round_ = key[0]
        complete = self._round_missing[round_] == 0
        missing = self.missing
        before = self._refresh(key, by_id, forfeits=False)
        self._round_missing[round_] -= missing - self.missing
        if complete:
            self._count(key, before, -1)
            self._count(key, self.results[key], 1)
        elif self._round_missing[round_] == 0:
            for each in self._round_keys[round_]:
                self._count(each, self.results[each], 1)

    def _count(self, key: tuple[int, str, str], result: PairResult, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) a pairing's games in the results fitted."""
        if not result.counted or not result.games:
            return
        _, a, b = key
        pair, score = ((a, b), result.score[0]) if a < b else ((b, a), result.score[1])
        s, g = self._results.get(pair, (0.0, 0))
        self._results[pair] = (s + sign * score, g + sign * len(result.games))
        self._fit = None

    def read(self, state: StageState, out: frozenset[str]) -> None:
        stage = self.stage
        state.played = self.missing == 0
        state.spent = self.spent
        self._read_points(state)
        bots = [b for b in state.field if b in self.here]
        if self._fit is None or self._fit[0] != tuple(bots):
            self._fit = (tuple(bots), fit(bots, self._results))
        state.model = self._fit[1]
        state.in_play = [b for b in ranking(bots, state.model) if b not in out]
        state.verdicts = verdicts(state.in_play, state.model, stage.confidence, stage.within_elo, stage.settle_top)
        done = len(state.in_play) < 2 or state.settled or state.spent + 2 > stage.max_games
        state.total_rounds = len(state.pairings) + (0 if done else 1)


class _KnockoutFold(_StageFold):
    """A knockout stage: its bracket's matches, each read anew from its games."""

    def __init__(self, stage: Stage, here: set[str]) -> None:
        super().__init__(stage, here)
        self.matches: list[list[Match]] = []
        #: Once drawn, the bracket says who was seeded where, whoever has
        #: left or been withdrawn since.
        self.field: list[str] = []

    def pair(self, pairing: Pairing) -> list[tuple[Any, list[str]]]:
        if not self.pairings:
            self.field = _seeds_of(pairing)
        self._take(pairing)
        seed = {b: i + 1 for i, b in enumerate(self.field)}
        matches: list[Match] = []
        slots = []
        limit = self.stage.games_per_match + self.stage.tiebreak_pairs
        for a, b in pairing.pairs:  # in bracket order, a bye as (bot, None)
            if b is None:
                matches.append(Match(pairing.round, (a, None), (seed[a], None), winner=a, decided_by="bye"))
                continue
            match = Match(pairing.round, (a, b), (seed[a], seed[b]))
            _play_match(match, self.stage, {}, self.here)
            slots.append(((len(self.matches), len(matches)), game_ids(pairing.round, a, b, limit)))
            matches.append(match)
        self.matches.append(matches)
        return slots

    def refresh(self, key: Any, by_id: Mapping[str, GameRecord]) -> None:
        round_index, index = key
        old = self.matches[round_index][index]
        match = self.matches[round_index][index] = Match(old.round, old.bots, old.seeds)
        _play_match(match, self.stage, by_id, self.here)

    def read(self, state: StageState, out: frozenset[str]) -> None:
        if self.pairings:
            state.field = list(self.field)
        state.total_rounds = knockout_rounds(len(state.field))
        state.matches = self.matches
        state.played = all(m.winner for matches in self.matches for m in matches)
        results = [[(m.winner, m.loser) for m in matches if m.winner is not None] for matches in self.matches]
        state.places = knockout_places(results, len(state.field))


def _seeds_of(first_round: Pairing) -> list[str]:
    """A knockout's field in seeding order, from its first round's bracket."""
    slots = [bot for pair in first_round.pairs for bot in pair]
    seeded = sorted((seed, bot) for seed, bot in zip(bracket_slots(len(slots)), slots) if bot is not None)
    return [bot for _, bot in seeded]


def _play_match(match: Match, stage: Stage, by_id: Mapping[str, GameRecord], here: set[str]) -> None:
    """Fill ``match`` from the records: the game pairs it has so far, the
    score and, once decided, the winner.  A match decided on the board
    stands when a bot leaves the tournament later; one not decided yet is
    a walkover for the bot that stays."""
    a, b = match.bots
    assert b is not None
    limit = stage.games_per_match + stage.tiebreak_pairs
    # Every game pair recorded belongs to the match, a tie-break pair whose
    # first game pair is being played again (a lost line, --replay) included:
    # its games were played, and they stay scheduled.
    every = game_ids(match.round, a, b, limit)
    match.pairs = max([stage.games_per_match, *((k // 2) + 1 for k, i in enumerate(every) if i in by_id)])
    while True:
        ids = game_ids(match.round, a, b, match.pairs)
        done = [by_id[i] for i in ids if i in by_id]
        match.games = [r.game_id for r in done]
        match.score = (sum(score_of(r, a) for r in done), sum(score_of(r, b) for r in done))
        if len(done) < len(ids):
            if a not in here or b not in here:
                match.winner, match.decided_by = (a if a in here else b), "walkover"
            return  # being played
        if match.score[0] != match.score[1]:
            match.winner = a if match.score[0] > match.score[1] else b
            match.decided_by = "score" if match.pairs == stage.games_per_match else "tie-break"
            return
        if match.pairs >= limit:
            match.winner, match.decided_by = (a if match.seeds[0] < (match.seeds[1] or 0) else b), "seed"
            return
        match.pairs += 1
