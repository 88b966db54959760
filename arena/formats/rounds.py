"""The rounds of a Swiss, knockout or staged tournament, read from the
pairings stored in ``tournament.json`` and the games played.

A round is paired once, when the rounds before it are complete, and its
pairing is written to ``tournament.json`` before its first game starts
(:mod:`arena.formats.progression` makes it).  From then on the pairing is a fact
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

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from arena.game.records import GameRecord
from arena.formats.adaptive import Fit, Verdict, fit, in_scope, ranking, verdicts
from arena.formats.game_pairs import game_ids
from arena.formats.pairing import bracket_slots, knockout_places, knockout_rounds
from arena.formats.scoring import buchholz, points_order, score_of, sonneborn_berger
from arena.formats.stages import BYE_SCORES, Pairing, Stage

__all__ = ["Match", "PairResult", "Rounds", "StageState", "pairs_per_pairing", "read_rounds"]

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
    #: Adaptive: the Bradley–Terry fit of its games, its bots still in play by
    #: rating, the verdict on each adjacent pair of those, and the games its
    #: rounds have scheduled so far.
    model: Fit | None = None
    in_play: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    spent: int = 0

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
            # The bots still in (no place yet) above every bot knocked out.
            return sorted(self.field, key=lambda b: (self.places.get(b, (0, 0))[0], seed[b]))
        if self.stage.format == "adaptive" and self.model is not None:
            # A bot taken out of the tournament has no rating: after the others (places() drops it).
            rated = [b for b in self.field if b in self.model.elo]
            return ranking(rated, self.model) + [b for b in self.field if b not in self.model.elo]
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
    #: The bots still in the tournament; None: every bot paired.
    present: frozenset[str] | None = None

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
    games played, by id).  ``seeding`` is the first stage's field in seeding
    order; ``present`` the bots still in the tournament (default: all), so
    that a pairing with a bot that left counts for nothing (a knockout
    match: a walkover); ``out_of_play`` the bots withdrawn, which an
    adaptive stage's stop rule no longer waits for."""
    by_id = {record.game_id: record for record in records}
    here = set(seeding if present is None else present)
    states: list[StageState] = []
    for number, stage in enumerate(stages, start=1):
        if number == 1:
            field_ = list(seeding)
        else:
            before = states[-1]
            paired = [p for p in pairings if p.stage == number]
            if not before.complete and not paired:
                # A stage is paired once the one before is complete; paired,
                # it stands even when a game of the stage before is played
                # again (an arbiter's pairing sheet is not redrawn).
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
        elif stage.format == "adaptive":
            _read_adaptive(state, by_id, here, set(out_of_play))
        else:
            _read_points(state, by_id, suite_size, here)
        states.append(state)
    return Rounds(states, list(pairings), len(stages), None if present is None else frozenset(here))


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
            counted = a in here and b in here
            result = state.results[(pairing.round, a, b)] = PairResult(counted=counted)
            ids = game_ids(pairing.round, a, b, pairs_per_pairing(stage, suite_size))
            for game_id in ids:
                record = by_id.get(game_id)
                if record is None:
                    state.played = state.played and not counted  # a removed bot's pairing is never played
                    continue
                result.games.append(game_id)
                if record.forfeit_by is not None:
                    result.forfeits.append((record.players[record.forfeit_by], record.reason))
                result.score = (result.score[0] + score_of(record, a), result.score[1] + score_of(record, b))
                if not counted:
                    continue
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


def _read_adaptive(state: StageState, by_id: Mapping[str, GameRecord], here: set[str], out: set[str]) -> None:
    """An adaptive stage's results, fit and verdicts.  It is complete once
    the stop rule holds, or when another game pair would pass ``max_games``:
    its rounds are then all it has.

    The fit is of the rounds whose games are all in: a round is the unit
    the stop rule and the next pairing look at, and a run reads the stage
    after every game, which would otherwise fit it again after every game
    (a second at 1,000 bots); :func:`arena.formats.adaptive.fit` remembers
    the fit of the same results."""
    stage = state.stage
    results: dict[tuple[str, str], tuple[float, int]] = {}
    points: dict[str, float] = {b: 0.0 for b in state.field}
    pair_points: dict[tuple[str, str], float] = {}
    for pairing in state.pairings:
        this_round: dict[tuple[str, str], tuple[float, int]] = {}
        complete = True
        for a, b in pairing.pairs:
            counted = a in here and b in here
            result = state.results[(pairing.round, a, b)] = PairResult(counted=counted)
            ids = game_ids(pairing.round, a, b, 1)
            state.spent += len(ids) if counted else 0
            key = (a, b) if a < b else (b, a)
            for game_id in ids:
                record = by_id.get(game_id)
                if record is None:
                    complete = complete and not counted
                    continue
                result.games.append(game_id)
                result.score = (result.score[0] + score_of(record, a), result.score[1] + score_of(record, b))
                if not counted:
                    continue
                s, g = this_round.get(key, (0.0, 0))
                this_round[key] = (s + score_of(record, key[0]), g + 1)
                for bot, other in ((a, b), (b, a)):
                    points[bot] = points.get(bot, 0.0) + score_of(record, bot)
                    pair_points[(bot, other)] = pair_points.get((bot, other), 0.0) + score_of(record, bot)
            result.played = len(result.games) == len(ids)
        state.played = state.played and complete
        if complete:
            for key, (s, g) in this_round.items():
                before = results.get(key, (0.0, 0))
                results[key] = (before[0] + s, before[1] + g)
    state.points, state.pair_points = points, pair_points
    bots = [b for b in state.field if b in here]
    state.model = fit(bots, results)
    state.in_play = [b for b in ranking(bots, state.model) if b not in out]
    state.verdicts = verdicts(state.in_play, state.model, stage.confidence, stage.within_elo, stage.settle_top)
    done = len(state.in_play) < 2 or state.settled or state.spent + 2 > stage.max_games
    state.total_rounds = len(state.pairings) + (0 if done else 1)


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
