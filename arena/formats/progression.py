"""Swiss, knockout and staged tournaments: pair the next round from the
results, and the games of the rounds paired so far.

A round is paired when every game of the rounds before it is recorded (and
each knockout match decided), by a pure function of the stages, the seeding
and those results (:mod:`arena.formats.pairing`), so a run resumed after
``kill -9`` pairs it exactly as an uninterrupted one would.  Once paired it
is stored in ``tournament.json`` (see :mod:`arena.formats.rounds`) and is
never paired again.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.bot.forfeits import UNPLAYED_FORFEITS
from arena.formats.adaptive import adaptive_round, idle_rounds, in_scope
from arena.formats.competition import Competition
from arena.formats.game_pairs import add_game_pair, round_opening
from arena.formats.pairing import PairingError, knockout_bracket, knockout_next_round, swiss_round
from arena.formats.rounds import Rounds, RoundsFold, StageState, pairs_per_pairing
from arena.formats.schedule import make_schedule, pairings
from arena.formats.scoring import scored_record
from arena.formats.stages import Pairing
from arena.game.records import GameRecord, GameSpec, pair_id

__all__ = ["FixedGames", "ProgressFold", "Withdrawals", "bots_in_play", "estimated_games", "fixed_games", "next_pairing",
           "read_progress", "rounds_schedule", "schedule_so_far", "shut_out", "withdrawn_bots"]


class ProgressFold:
    """A Swiss, knockout or staged tournament's rounds and the bots its
    games withdrew, kept up to date record by record (see
    :class:`arena.formats.rounds.RoundsFold`): a run folds each game once as
    it is stored, and each round once as it is paired."""

    def __init__(self, competition: Competition, seeding: Sequence[str], pairings: Iterable[Pairing] = ()) -> None:
        self.competition = competition
        self._rounds = RoundsFold(competition.stages, seeding, len(competition.suite()), present=competition.names)
        self._withdrawals = Withdrawals(competition.rules.withdraw_after_crashes)
        for pairing in pairings:
            self.pair(pairing)

    def add(self, record: GameRecord) -> None:
        """Fold one game's record (as recorded: this scores it)."""
        self._withdrawals.add(record)
        self._rounds.add(scored_record(record, self.competition.rules.disqualified))

    def pair(self, pairing: Pairing) -> None:
        """Fold the next round's pairing."""
        self._rounds.pair(pairing)

    def recorded(self, game_id: str) -> bool:
        """A record of ``game_id`` is folded."""
        return game_id in self._rounds.by_id

    def rounds(self) -> Rounds:
        """The rounds as far as they are paired and played."""
        return self._rounds.rounds(self._withdrawals.out | self.competition.out_of_play)


def read_progress(competition: Competition, seeding: Sequence[str], pairings: Sequence[Pairing],
                  records: Iterable[GameRecord]) -> Rounds:
    """The rounds ``pairings`` made, with the results of ``records``."""
    fold = ProgressFold(competition, seeding, pairings)
    for record in records:
        fold.add(record)
    return fold.rounds()


def next_pairing(competition: Competition, rounds: Rounds) -> Pairing | None:
    """The next round's pairing, when the rounds paired so far are all
    played and the tournament is not over; else None."""
    if rounds.finished or not rounds.stages:
        return None
    stage = rounds.current
    if not stage.played:
        return None
    number = len(rounds.pairings) + 1
    here = set(competition.names)
    gone = set(rounds.out_of_play)
    entrants = stage.field
    if stage.number > 1 and not stage.pairings:
        # A later stage is played by the best of the stage before still in the tournament.
        before = rounds.stages[stage.number - 2]
        entrants = [b for b in before.order if b in here and b not in gone][: stage.stage.top]
    if stage.stage.format == "knockout":
        pairs: list[tuple[str, str | None]]
        if not stage.matches:
            entrants = [b for b in entrants if b not in gone]
            if len(entrants) < 2:  # withdrawals left nobody to play it
                return None
            pairs = list(knockout_bracket(entrants))
        else:
            pairs = list(knockout_next_round(stage.winners(len(stage.matches) - 1)))
        return Pairing(number, stage.number, tuple(pairs))
    out = gone | {b for b in entrants if b not in here}
    if stage.stage.format == "adaptive":
        return _adaptive_pairing(competition, stage, number, out)
    if stage.stage.format == "round-robin":
        return Pairing(number, stage.number, tuple(pairings([b for b in entrants if b not in out], "round-robin")))
    standing = [(b, stage.points.get(b, 0.0)) for b in entrants]
    byes = [b for p in stage.pairings for b in p.byes]
    if len([b for b in entrants if b not in out]) < 2:  # nobody left to pair: the round passes
        return Pairing(number, stage.number, ())
    # Late in a small (or thinned) field no round may avoid a rematch, or
    # then a second bye: the rule gives way, the nearest scores meet again,
    # rather than the Swiss stop.
    for had_bye, rematches in ((byes, False), (byes, True), ((), True)):
        try:
            swiss, bye = swiss_round(standing, stage.opponents, had_bye, out, rematches=rematches)
            break
        except PairingError:
            continue
    return Pairing(number, stage.number, tuple(swiss), (bye,) if bye is not None else ())


def _adaptive_pairing(competition: Competition, stage: StageState, number: int, out: set[str]) -> Pairing:
    """An adaptive stage's next round (see :func:`arena.formats.adaptive.adaptive_round`)."""
    assert stage.model is not None
    order = [b for b in stage.in_play if b not in out]
    last: dict[str, str] = {}
    for pairing in stage.pairings:
        for a, b in pairing.pairs:
            if b is not None:
                last[a], last[b] = b, a
    idle = idle_rounds(order, [{b for pair in p.pairs for b in pair} for p in stage.pairings])
    scope = in_scope([v for v in stage.verdicts if v.better not in out and v.worse not in out], stage.stage.settle_top)
    pairs, odd_out = adaptive_round(order, stage.model, scope, idle, last, competition.seed, number,
                                    (stage.stage.max_games - stage.spent) // 2)
    return Pairing(number, stage.number, tuple(pairs), (odd_out,) if odd_out is not None else ())


def bots_in_play(competition: Competition, rounds: Rounds) -> set[str]:
    """The bots a later round of the stage being played may pair (and so the
    stages after it, which take its best): a knockout's bots still in, a
    Swiss's or round-robin's bots not withdrawn; all of them before the
    first round.  A run starts these, not the bots already out."""
    here = set(competition.names)
    if not rounds.stages or not rounds.pairings:
        return here - competition.out_of_play
    stage = rounds.current
    if stage.stage.format == "knockout":
        return {b for b in stage.field if b not in stage.places} & here - competition.out_of_play
    return set(stage.field) & here - rounds.out_of_play


def shut_out(competition: Competition, rounds: Rounds) -> list[str]:
    """The bots of the tournament that no round of its first stage pairs and
    none will: they came after its last round was paired (a knockout's
    first), so they play no game at all, unlike a bot that joins a Swiss
    with rounds still to pair."""
    if not rounds.stages or not rounds.stages[0].pairings:
        return []
    first = rounds.stages[0]
    if first.stage.format != "knockout" and len(first.pairings) < first.total_rounds:
        return []
    paired = {bot for pairing in first.pairings for pair in pairing.pairs for bot in pair} | \
        {bot for pairing in first.pairings for bot in pairing.byes}
    return [name for name in competition.names if name not in paired and name not in competition.out_of_play]


def withdrawn_bots(records: Iterable[GameRecord], crash_limit: int | None) -> set[str]:
    """The bots out of the tournament by ``records`` (see :class:`Withdrawals`)."""
    withdrawals = Withdrawals(crash_limit)
    for record in records:
        withdrawals.add(record)
    return set(withdrawals.out)


class Withdrawals:
    """The bots out of the tournament by their games, record by record: in
    the latest round they played, they did not start (``startup_failure``)
    or were withdrawn, or their last ``crash_limit`` games
    (``withdraw_after_crashes``) all ended in a crash forfeit.  A later
    Swiss round does not pair them."""

    def __init__(self, crash_limit: int | None) -> None:
        self.crash_limit = crash_limit
        self.out: set[str] = set()
        # Each bot's games by round and id (records come in any order), with its own forfeit's reason.
        self._games: dict[str, list[tuple[int, str, str | None]]] = {}

    def add(self, record: GameRecord) -> None:
        for color, name in record.players.items():
            own = record.reason if record.forfeit_by == color else None
            played = self._games.setdefault(name, [])
            insort(played, (record.round, record.game_id, own))
            if self._out(played):
                self.out.add(name)
            else:
                self.out.discard(name)

    def _out(self, played: list[tuple[int, str, str | None]]) -> bool:
        latest = played[-1][0]
        for round_, _, own in reversed(played):
            if round_ != latest:
                break
            if own in UNPLAYED_FORFEITS:
                return True
        limit = self.crash_limit
        return limit is not None and len(played) >= limit and all(own == "crash" for _, _, own in played[-limit:])


def rounds_schedule(competition: Competition, rounds: Rounds, versions: Mapping[str, str] | None = None,
                    known: FixedGames | None = None) -> list[GameSpec]:
    """The games of every round paired so far, round by round: in a Swiss
    round a game pair for each pairing, in a round-robin round a game pair
    per opening of the suite; in a knockout round each match's first
    ``games_per_match`` game pairs, then the tie-break pairs its score has
    called for so far.  Which opening a game pair plays: see
    :mod:`arena.formats.rounds`.  Pairings with a bot no longer in the
    tournament play nothing.  ``known``: the games of the first pairings,
    as :func:`fixed_games` kept them from an earlier call with the same
    ``competition`` and ``versions``, taken as they are."""
    openings = competition.suite()
    here = set(competition.names)
    specs: list[GameSpec] = list(known.specs) if known is not None else []
    skip = known.pairings if known is not None else 0

    for stage in rounds.stages:
        for index, pairing in enumerate(stage.pairings):
            if skip:
                skip -= 1
                continue
            if stage.stage.format != "knockout":
                for a, b in pairing.pairs:
                    if a in here and b in here:
                        first, second = sorted((a, b))  # type: ignore[type-var]
                        for j in range(pairs_per_pairing(stage.stage, len(openings))):
                            chosen = openings[j] if stage.stage.format == "round-robin" \
                                else round_opening(openings, pairing.round, j)
                            add_game_pair(specs, competition, pairing.round, pair_id(first, second), (first, second),
                                          chosen, j, versions)
                continue
            # A match with a bot that left plays nothing more; one decided on
            # the board stands in the bracket, its games out of the ranking.
            matches = [m for m in stage.matches[index] if m.bots[1] is not None and m.decided_by != "walkover"
                       and m.bots[0] in here and m.bots[1] in here]
            most = max((m.pairs for m in matches), default=0)
            for j in range(most):  # game pair j of every match that has one
                for match in matches:
                    if j < match.pairs:
                        first, second = sorted((match.bots[0], match.bots[1]))  # type: ignore[type-var]
                        add_game_pair(specs, competition, pairing.round, pair_id(first, second), (first, second),
                                      round_opening(openings, pairing.round, j), j, versions)
    return specs


@dataclass(frozen=True)
class FixedGames:
    """The games of a tournament's first ``pairings`` pairings, which no
    result changes: those of Swiss, round-robin and adaptive rounds (a
    knockout round's tie-break pairs depend on its games).  A run keeps
    them between rounds, so that pairing round ``r`` does not schedule the
    ``r - 1`` before it again."""

    pairings: int
    specs: tuple[GameSpec, ...]


def fixed_games(rounds: Rounds, schedule: Sequence[GameSpec]) -> FixedGames:
    """What of ``schedule`` (:func:`rounds_schedule` of ``rounds``) no result changes."""
    pairings = 0
    for stage in rounds.stages:
        if stage.stage.format == "knockout":
            break
        pairings += len(stage.pairings)
    last = max((pairing.round for pairing in rounds.pairings[:pairings]), default=0)
    return FixedGames(pairings, tuple(spec for spec in schedule if spec.round <= last))


def estimated_games(competition: Competition, rounds: Rounds, scheduled: int) -> int:
    """The games the whole tournament will have, as far as can be known: the
    ``scheduled`` ones (:func:`rounds_schedule` of ``rounds``), and those of
    the rounds still to pair (a knockout's without tie-breaks)."""
    suite = len(competition.suite())
    size = len(rounds.stages[0].field) if rounds.stages else len(competition.names)
    more = 0
    for number, stage in enumerate(competition.stages, start=1):
        state: StageState | None = rounds.stages[number - 1] if number <= len(rounds.stages) else None
        size = len(state.field) if state is not None else (stage.top or size)
        paired = len(state.pairings) if state is not None else 0
        if stage.format == "knockout":
            done = sum(1 for r in (state.matches if state else []) for m in r if m.bots[1] is not None)
            more += (size - 1 - done) * 2 * stage.games_per_match
        elif stage.format == "swiss":
            more += (stage.rounds - paired) * (size // 2) * 2
        elif stage.format == "adaptive" and (state is None or not state.complete):  # at most: it may settle sooner
            more += stage.max_games - (state.spent if state is not None else 0)
        else:
            more += (stage.rounds - paired) * (size * (size - 1) // 2) * 2 * suite
    return scheduled + max(0, more)


def schedule_so_far(competition: Competition, seeding: Sequence[str], pairings: Sequence[Pairing],
                    records: Sequence[GameRecord], versions: Mapping[str, str] | None = None,
                    known: FixedGames | None = None) -> tuple[list[GameSpec], Rounds | None]:
    """The schedule as far as it goes now: every game of a format fixed in
    advance; the games of the rounds ``pairings`` made for a Swiss, knockout
    or staged tournament (a knockout match's tie-break pairs as its recorded
    games call for), with those rounds as far as ``records`` play them.
    ``known``: see :func:`rounds_schedule`."""
    if not competition.paired_by_results:
        return make_schedule(competition, versions), None
    rounds = read_progress(competition, seeding, pairings, records)
    return rounds_schedule(competition, rounds, versions, known), rounds
