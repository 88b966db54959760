"""The rounds of a Swiss, knockout or staged tournament, read from the
pairings stored in ``tournament.json`` and the games played.

A round is paired once, when the rounds before it are complete, and its
pairing is written to ``tournament.json`` before its first game starts
(:mod:`arena.run.progression` makes it).  From then on the pairing is a fact
of the tournament, as an arbiter's pairing sheet is: a bot that joins later,
or a game played again, never re-pairs a round already paired.  Reading the
rounds (who scored what, which knockout match needs another game pair, who
won it, the places) needs the pairings and the records only, so every
command reads a results directory the same way.  Pure: no I/O.

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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.game.records import GameRecord, game_id, pair_id
from arena.results.statistics import buchholz, score_of, sonneborn_berger

__all__ = [
    "BYE_SCORES", "STAGE_FORMATS", "Match", "PairResult", "Pairing", "Rounds", "Stage", "StageState", "bracket_slots",
    "game_ids", "knockout_places", "pairs_per_pairing", "rounds_from_meta", "knockout_rounds", "pairings_from_json", "points_order", "read_rounds",
]

#: The formats a stage may have.
STAGE_FORMATS = ("round-robin", "swiss", "knockout")
#: What a Swiss bye scores, per game of the game pair it stands for (``bye:`` in a tournament file).
BYE_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}


@dataclass(frozen=True)
class Stage:
    """One stage of a tournament, as the file gives it."""

    format: str
    #: Swiss and round-robin: the rounds; a knockout's follow from its field.
    rounds: int = 1
    #: A later stage: the number of best bots of the stage before that play it.
    top: int | None = None
    #: Knockout: game pairs a match has, and the most it adds while tied.
    games_per_match: int = 1
    tiebreak_pairs: int = 3
    #: Swiss: what a bye scores (see :data:`BYE_SCORES`).
    bye: str = "win"

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"format": self.format}
        if self.format != "knockout":
            entry["rounds"] = self.rounds
        if self.top is not None:
            entry["top"] = self.top
        if self.format == "knockout":
            entry |= {"games_per_match": self.games_per_match, "tiebreak_pairs": self.tiebreak_pairs}
        if self.format == "swiss":
            entry["bye"] = self.bye
        return entry

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Stage:
        """A stage as ``tournament.json`` holds it; ``ValueError`` when it is not one."""
        try:
            stage = cls(
                format=str(entry["format"]), rounds=int(entry.get("rounds", 1)),
                top=None if entry.get("top") is None else int(entry["top"]),
                games_per_match=int(entry.get("games_per_match", 1)), tiebreak_pairs=int(entry.get("tiebreak_pairs", 3)),
                bye=str(entry.get("bye", "win")),
            )
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"not a stage: {str(entry)[:200]}") from None
        if (stage.format not in STAGE_FORMATS or stage.bye not in BYE_SCORES or not 0 < stage.rounds <= 10_000
                or stage.games_per_match < 1 or stage.tiebreak_pairs < 0 or (stage.top is not None and stage.top < 2)):
            raise ValueError(f"not a stage: {dict(entry)}")
        return stage


@dataclass(frozen=True)
class Pairing:
    """One round as it was paired: its number counts through the stages
    (a knockout after a 7-round Swiss starts at round 8)."""

    round: int
    stage: int
    #: Each pair's bots in the order of the pairing; a knockout's in bracket
    #: order, a bye as ``(bot, None)``.
    pairs: tuple[tuple[str, str | None], ...]
    #: Swiss: the bot with the bye.
    byes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "stage": self.stage, "pairs": [list(p) for p in self.pairs], "byes": list(self.byes)}


def pairings_from_json(entries: Any) -> list[Pairing]:
    """The pairings ``tournament.json`` holds; ``ValueError`` when they are not."""
    if not isinstance(entries, list):
        raise ValueError("pairings must be a list")
    out = []
    for entry in entries:
        try:
            pairs = tuple((a, b) for a, b in _list(entry["pairs"]))
            byes = tuple(_list(entry.get("byes", [])))
            pairing = Pairing(int(entry["round"]), int(entry["stage"]), pairs, byes)
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"pairing {len(out) + 1} is not one the arena writes") from None
        # Names as the arena writes them: a bot's is a string, a bye's partner None.
        if not all(isinstance(a, str) and (b is None or isinstance(b, str)) for a, b in pairs) \
                or not all(isinstance(b, str) for b in byes):
            raise ValueError(f"pairing {len(out) + 1} names a bot by something else than a string")
        out.append(pairing)
    if [p.round for p in out] != list(range(1, len(out) + 1)):
        raise ValueError("pairings must number their rounds 1, 2, 3, ...")
    return out


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"not a list: {value!r}")
    return value


def rounds_from_meta(meta: Mapping[str, Any], records: Iterable[GameRecord], suite_size: int) -> Rounds | None:
    """The rounds a results directory's ``tournament.json`` says were paired,
    with the results of ``records``; None for a tournament not paired round
    by round (or a ``tournament.json`` that cannot be read as one).
    ``suite_size`` is the openings each pairing plays."""
    try:
        stages = [Stage.from_json(entry) for entry in meta.get("stages") or ()]
        if not stages:
            return None
        names = [str(b["name"]) for b in meta.get("bots") or ()]
        seeding = [str(n) for n in meta.get("seeding") or ()]
        seeding += [n for n in names if n not in seeding]
        return read_rounds(stages, seeding, pairings_from_json(meta.get("pairings") or []), records, suite_size, names)
    except (KeyError, TypeError, ValueError):
        return None


def pairs_per_pairing(stage: Stage, suite_size: int) -> int:
    """The game pairs a Swiss or round-robin pairing plays in a round."""
    return suite_size if stage.format == "round-robin" else 1


def game_ids(round_: int, a: str, b: str, pairs: int) -> list[str]:
    """The ids of the first ``pairs`` game pairs of ``a`` and ``b`` in a
    round, as every schedule names them (``r<round>-<a>~<b>-g<k>``, the
    names in order)."""
    first, second = sorted((a, b))
    return [game_id(round_, pair_id(first, second), k) for k in range(1, 2 * pairs + 1)]


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
    buchholz: dict[str, float] = field(default_factory=dict)
    sonneborn_berger: dict[str, float] = field(default_factory=dict)
    #: Swiss and round-robin: (a, b) -> a's points against b in this stage.
    pair_points: dict[tuple[str, str], float] = field(default_factory=dict)
    #: Swiss and round-robin: each pairing's games and score, by (round, a, b)
    #: as paired; none for a pairing with a bot that left (it plays nothing).
    results: dict[tuple[int, str, str], PairResult] = field(default_factory=dict)
    #: Knockout: its matches, round by round.
    matches: list[list[Match]] = field(default_factory=list)
    #: Knockout: each bot's place, as the range it shares ((3, 4) for a semi-final loser).
    places: dict[str, tuple[int, int]] = field(default_factory=dict)

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
            # The bots still in (no place yet) above every bot knocked out.
            return sorted(self.field, key=lambda b: (self.places.get(b, (0, 0))[0], seed[b]))
        return points_order(self.field, self.pair_points, self.points)

    def round_name(self, index: int) -> str:
        """A knockout round's name by the bots it leaves (``index`` from 0):
        ``final``, ``semi-finals``, ``quarter-finals``, ``round of 16``, ..."""
        left = 2 ** (self.total_rounds - index)
        return {2: "final", 4: "semi-finals", 8: "quarter-finals"}.get(left, f"round of {left}")

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
        total = max(state.total_rounds, len(state.pairings))
        if max(len(self.stages), self.stage_count) > 1:
            # The tables number rounds through the stages: say both.
            return f"round {len(self.pairings)}: stage {state.number} ({state.stage.format}), {len(state.pairings)} of {total}"
        return f"round {len(state.pairings)} of {total}"

    @property
    def bye_points(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for stage in self.stages:
            for bot, points in stage.bye_points.items():
                out[bot] = out.get(bot, 0.0) + points
        return out

    def places(self) -> list[tuple[str, tuple[int, int]]]:
        """Every bot with the places it shares, from the best: the last stage
        reached decides, each earlier stage places those it knocked out."""
        placed: list[tuple[str, tuple[int, int]]] = []
        seen: set[str] = set()
        for stage in reversed(self.stages):
            start = len(seen)
            order = [b for b in stage.order if b not in seen]
            # A knockout's bots still in share the places above those knocked out.
            alive = sum(1 for b in order if b not in stage.places)
            for i, bot in enumerate(order):
                if stage.stage.format == "knockout" and bot in stage.places:
                    first, last = stage.places[bot]
                    placed.append((bot, (start + first, start + last)))
                elif stage.stage.format == "knockout":
                    placed.append((bot, (start + 1, start + alive)))
                else:
                    placed.append((bot, (start + i + 1, start + i + 1)))
            seen.update(order)
        return placed


def points_order(seeding: Sequence[str], points: Mapping[tuple[str, str], float],
                 scores: Mapping[str, float]) -> list[str]:
    """``seeding``'s bots ordered by score (byes included in ``scores``),
    then Buchholz, then Sonneborn–Berger, then seeding.  ``points[(a, b)]``
    is what ``a`` scored against ``b``."""
    bh, sb = buchholz(points, scores), sonneborn_berger(points, scores)
    position = {b: i for i, b in enumerate(seeding)}
    return sorted(seeding, key=lambda b: (-scores.get(b, 0.0), -bh.get(b, 0.0), -sb.get(b, 0.0), position[b]))


def bracket_slots(field_size: int) -> list[int]:
    """The seeds (from 1) of a single-elimination bracket's slots, in
    bracket order: in a bracket of 2^k slots seed 1 meets seed 2^k, and the
    best two can meet only in the final, the best four only in the
    semi-finals (for 8: 1, 8, 4, 5, 2, 7, 3, 6).  Seeds beyond
    ``field_size`` are byes."""
    size, order = 1, [1]
    while size < field_size:
        size *= 2
        # Each seed s of the smaller bracket takes the slot of its match
        # against size + 1 - s: the standard recursive placement.
        order = [slot for s in order for slot in (s, size + 1 - s)]
    return order


def knockout_rounds(field_size: int) -> int:
    """The rounds of a single elimination of ``field_size`` bots."""
    return max(1, math.ceil(math.log2(field_size))) if field_size > 1 else 0


def knockout_places(rounds: Sequence[Sequence[tuple[str, str | None]]], field_size: int) -> dict[str, tuple[int, int]]:
    """Each bot's place, as the range (first, last) it shares: (1, 1) for the
    winner, (2, 2) for the finalist, (3, 4) for the semi-final losers, (5, 8)
    for the quarter-final losers, ...; the first round's losers share the
    places down to ``field_size``.

    ``rounds`` holds each round's results so far as (winner, loser) pairs, a
    bye as (bot, None); the rounds of a complete knockout end with its final.
    """
    total = knockout_rounds(field_size)
    places: dict[str, tuple[int, int]] = {}
    for r, results in enumerate(rounds):
        # The losers of round r (of ``total``) go out when 2^(total - r) bots
        # are left: places 2^(total-r-1)+1 .. 2^(total-r).
        first, last = 2 ** (total - r - 1) + 1, min(2 ** (total - r), field_size)
        for winner, loser in results:
            if loser is not None:
                places[loser] = (first, last)
            if r == total - 1:
                places[winner] = (1, 1)
    return places


def read_rounds(
    stages: Sequence[Stage],
    seeding: Sequence[str],
    pairings: Sequence[Pairing],
    records: Iterable[GameRecord],
    suite_size: int,
    present: Iterable[str] | None = None,
) -> Rounds:
    """The rounds ``pairings`` made, with the results of ``records`` (the
    games played, by id).  ``seeding`` is the first stage's field in seeding
    order; ``present`` the bots still in the tournament (default: all), so
    that a pairing with a bot that left counts for nothing (a knockout
    match: a walkover)."""
    by_id = {record.game_id: record for record in records}
    here = set(seeding if present is None else present)
    states: list[StageState] = []
    for number, stage in enumerate(stages, start=1):
        if number == 1:
            field_ = list(seeding)
        else:
            before = states[-1]
            if not before.complete:
                break
            # Once the stage is paired, its field is the bots it was paired
            # with, whoever has left or been withdrawn since.
            field_ = [b for b in before.order if b in here][: stage.top]
        state = StageState(number, stage, field_, [p for p in pairings if p.stage == number])
        if stage.format == "knockout" and state.pairings:
            # Once drawn, the bracket says who was seeded where, whoever has
            # left or been withdrawn since.
            state.field = _seeds_of(state.pairings[0])
        elif number > 1 and state.pairings:
            paired = {b for p in state.pairings for pair in p.pairs for b in pair if b is not None}
            state.field = [b for b in before.order if b in paired | {b for p in state.pairings for b in p.byes}]
        if stage.format == "knockout":
            _read_knockout(state, by_id, suite_size, here)
        else:
            _read_points(state, by_id, suite_size, here)
        states.append(state)
    return Rounds(states, list(pairings), len(stages))


def _seeds_of(first_round: Pairing) -> list[str]:
    """A knockout's field in seeding order, from its first round's bracket."""
    slots = [bot for pair in first_round.pairs for bot in pair]
    seeded = sorted((seed, bot) for seed, bot in zip(bracket_slots(len(slots)), slots) if bot is not None)
    return [bot for _, bot in seeded]


def _read_points(state: StageState, by_id: Mapping[str, GameRecord], suite_size: int, here: set[str]) -> None:
    stage = state.stage
    state.total_rounds = stage.rounds
    points: dict[str, float] = {b: 0.0 for b in state.field}
    pair_points: dict[tuple[str, str], float] = {}
    bye_value = BYE_SCORES[stage.bye] * 2  # a game pair's
    for pairing in state.pairings:
        for a, b in pairing.pairs:
            if a not in here or b not in here:
                continue
            result = state.results[(pairing.round, a, b)] = PairResult()
            ids = game_ids(pairing.round, a, b, pairs_per_pairing(stage, suite_size))
            for game_id in ids:
                record = by_id.get(game_id)
                if record is None:
                    state.played = False
                    continue
                result.games.append(game_id)
                result.score = (result.score[0] + score_of(record, a), result.score[1] + score_of(record, b))
                for bot, other in ((a, b), (b, a)):
                    score = score_of(record, bot)
                    points[bot] = points.get(bot, 0.0) + score
                    pair_points[(bot, other)] = pair_points.get((bot, other), 0.0) + score
            result.played = len(result.games) == len(ids)
        for bot in pairing.byes:
            if bot not in here:  # a bot that left: out of the ranking, byes too
                continue
            points[bot] = points.get(bot, 0.0) + bye_value
            state.bye_points[bot] = state.bye_points.get(bot, 0.0) + bye_value
    state.points, state.pair_points = points, pair_points
    state.buchholz = buchholz(pair_points, points)
    state.sonneborn_berger = sonneborn_berger(pair_points, points)


def _read_knockout(state: StageState, by_id: Mapping[str, GameRecord], suite_size: int, here: set[str]) -> None:
    stage = state.stage
    state.total_rounds = knockout_rounds(len(state.field))
    seed = {b: i + 1 for i, b in enumerate(state.field)}
    results: list[list[tuple[str, str | None]]] = []
    for pairing in state.pairings:
        matches = []
        for a, b in pairing.pairs:  # in bracket order, a bye as (bot, None)
            if b is None:
                matches.append(Match(pairing.round, (a, None), (seed[a], None), winner=a, decided_by="bye"))
                continue
            match = Match(pairing.round, (a, b), (seed[a], seed[b]))
            _play_match(match, stage, by_id, here)
            matches.append(match)
            if not match.winner:
                state.played = False
        state.matches.append(matches)
        results.append([(m.winner, m.loser) for m in matches if m.winner is not None])
    state.places = knockout_places(results, len(state.field))


def _play_match(match: Match, stage: Stage, by_id: Mapping[str, GameRecord], here: set[str]) -> None:
    """Fill ``match`` from the records: the game pairs it has so far, the
    score and, once decided, the winner.  A match decided on the board
    stands when a bot leaves the tournament later; one not decided yet is
    a walkover for the bot that stays."""
    a, b = match.bots
    assert b is not None
    limit = stage.games_per_match + stage.tiebreak_pairs
    match.pairs = stage.games_per_match
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
