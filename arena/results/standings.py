"""TrueSkill ratings and tallies folded from finished games, ordered by the
tournament's ranking rule (:data:`RANKING_RULES`).  Pure: no I/O.

Games are folded in schedule order (``GameRecord.index``), never in the order
they finished, so the same results always give the same ratings however many
workers played them.  A draw is rated as a draw; a forfeit is rated as a loss
for the bot that forfeited.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trueskill

from arena.game.clock import TimeControl
from arena.game.records import GameRecord, schedule_key
from arena.formats.adaptive import settle_rule
from arena.formats.competition import RANKINGS, Rules
from arena.formats.rounds import Rounds
from arena.formats.stages import STAGE_NAMES
from arena.formats.scoring import Tally, scored, scored_record, side_score, sonneborn_berger
from arena.results.game_index import move_times_of
from arena.results.nodes import NodeTallies, NodeTally
from arena.results.sprt import SprtStatus, sprt_status
from arena.results.statistics import MatchStatistics, fit_elo_tally, match_statistics, scores_of

__all__ = [
    "INITIAL_MU",
    "INITIAL_SIGMA",
    "DRAW_PROBABILITY",
    "BotStanding",
    "Opponent",
    "Standings",
    "rating_env",
    "compute_standings",
    "reference_ranking",
    "RANKINGS",
    "RANKING_RULES",
    "reference_rule",
    "RatingFold",
    "StandingsFold",
    "OutOfOrder",
    "conservative",
    "RunningLeader",
]

#: TrueSkill's own defaults for a new bot's skill estimate and its uncertainty.
INITIAL_MU = 25.0
INITIAL_SIGMA = INITIAL_MU / 3
#: TrueSkill's default chance of a draw between equal bots; OXONO and YOXII
#: games can end drawn, and 10% is a fair prior for both.
DRAW_PROBABILITY = 0.10

#: Each rule in one line, as the tables and the report state it.
RANKING_RULES = {
    "trueskill": "TrueSkill's cautious estimate mu - 3·sigma, then score",
    "elo": "the Bradley–Terry Elo of all games, then score",
    "points": "points (win 1, draw ½), then the head-to-head score among the tied bots, "
              "then Sonneborn–Berger, then wins; a tie none of them breaks shares its rank (shown 3=)",
}


def conservative(mu: float, sigma: float) -> float:
    """TrueSkill's cautious estimate, mu - 3 sigma: the bot is very likely at
    least this strong, so an unproven bot does not rank high by luck."""
    return mu - 3 * sigma


def rating_env() -> trueskill.TrueSkill:
    """A fresh TrueSkill environment as used for every rating here.

    It keeps TrueSkill's defaults: mu = 25, sigma = 25/3, beta = sigma/2,
    tau = sigma/100, draw probability 0.10.  The package's global environment is
    never touched, so other users of ``trueskill`` are unaffected.
    """
    return trueskill.TrueSkill(mu=INITIAL_MU, sigma=INITIAL_SIGMA, draw_probability=DRAW_PROBABILITY)


@dataclass
class BotStanding(Tally):
    """One bot's rating and tallies over the games it played."""

    name: str
    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA
    #: Forfeit reason -> how many games this bot lost that way, and won that way (its opponent forfeited).
    forfeits: dict[str, int] = field(default_factory=dict)
    forfeit_wins: dict[str, int] = field(default_factory=dict)
    #: Moves this bot played, and the time charged for them in total.
    moves: int = 0
    move_ms: float = 0.0
    #: Elo from the Bradley–Terry fit of all games (mean 0) and the half
    #: width of its 95 % interval; ``None`` before the bot's first game.
    elo: float | None = None
    elo_margin: float | None = None
    #: Likelihood that this bot is stronger than the next one in the ranking;
    #: ``None`` for the last bot and for bots without games.
    los_next: float | None = None
    #: (games played, mu, sigma) after each of this bot's games, in schedule order.
    history: list[tuple[int, float, float]] = field(default_factory=list, repr=False)
    #: Version -> games this bot played in it (records that name versions only),
    #: the version of its most recent game first.
    versions: dict[str, int] = field(default_factory=dict)
    #: The version that plays now (the tournament's), else that of its most recent game.
    version: str | None = None
    #: Time control (as text, ``5+0.1``) -> games this bot played under it.
    clocks: dict[str, int] = field(default_factory=dict)
    #: Its place in the ranking, from 1; bots tied under ``ranking: points``
    #: after every tie-break share the place of the first of them.
    rank: int = 0
    #: True when another bot has the same :attr:`rank`.
    shared_rank: bool = False
    #: Sonneborn–Berger: the sum, over its games, of the points it scored
    #: times the final score of the opponent of that game.
    sonneborn_berger: float = 0.0
    #: Its score in the games among the bots with the same score (``ranking: points``).
    tied_score: float = 0.0
    #: A Swiss, knockout or staged tournament: what its byes scored; its
    #: points (byes included) and Buchholz in the first stage, when that is
    #: a Swiss or round-robin (what orders it); the places it shares ((3, 4)
    #: for a semi-final loser).
    bye_points: float = 0.0
    points: float | None = None
    buchholz: float | None = None
    place: tuple[int, int] | None = None
    #: Named in the file's ``withdrawn:`` (its results stand), or ``disqualified:``
    #: (its games scored as losses, ranked after every other bot).
    withdrawn_by_organiser: bool = False
    disqualified: bool = False
    #: It plays from another machine (``remote: true``): outside the sandbox
    #: and limits, its move times including the network.
    remote: bool = False

    @property
    def rank_text(self) -> str:
        """Its rank as the tables show it: ``3``, ``3=`` when shared, ``3–4`` for a place range."""
        if self.place is not None and self.place[0] != self.place[1]:
            return f"{self.place[0]}–{self.place[1]}"
        return f"{self.rank}=" if self.shared_rank else str(self.rank)

    @property
    def withdrawn(self) -> bool:
        """Withdrawn by the organiser, or by the arena (``withdraw_after_crashes``):
        its games not played were forfeited."""
        return self.withdrawn_by_organiser or bool(self.forfeits.get("withdrawn"))

    @property
    def earlier_games(self) -> int:
        """Games played by a version other than :attr:`version`."""
        return sum(self.versions.values()) - self.versions.get(self.version or "", 0)

    @property
    def rating(self) -> float:
        """Conservative skill estimate, mu - 3 sigma: the bot is very likely at
        least this strong, so an unproven bot does not rank high by luck."""
        return conservative(self.mu, self.sigma)

    @property
    def mean_move_ms(self) -> float | None:
        """Mean time charged per move; ``None`` when the bot played no move."""
        return self.move_ms / self.moves if self.moves else None


@dataclass(frozen=True)
class Opponent:
    """A gauntlet's challenger against one of its opponents, from the challenger's side."""

    name: str
    match: MatchStatistics


@dataclass
class Standings:
    """Ratings and tallies of a set of games, ready for rendering."""

    #: The game played (``oxono``, ``yoxii``), or ``None`` when no game was played.
    game: str | None
    #: Ranked by the rule ``ranking`` names (see :data:`RANKING_RULES`), then name.
    bots: list[BotStanding]
    #: Row bot -> column bot -> (row's score against column, games between them),
    #: for every ordered pair of distinct bots (``(0.0, 0)`` if they never met):
    #: a :class:`Crosstable`, whose cells are made as they are read.
    crosstable: Mapping[str, Mapping[str, tuple[float, int]]]
    #: Colour -> the results of whoever played that
    #: colour, in seat order: this shows any first-mover advantage.
    by_color: dict[str, Tally]
    total_games: int
    #: The Elo fit added a virtual draw between every two bots, because some
    #: bot or group scored 100 % or 0 % against the rest (see arena.results.statistics).
    elo_regularized: bool = False
    #: With exactly two bots: the match from the first bot's side (the first
    #: of ``bot_names``), game pairs included.
    match: MatchStatistics | None = None
    #: Names of the two bots of ``match``, first bot first.
    match_bots: tuple[str, str] | None = None
    #: The SPRT's state, when one was asked for.
    sprt: SprtStatus | None = None
    #: ``format: reference``: the reference bots, and the other bots (the
    #: entrants) ranked by their score against them (see :func:`reference_ranking`).
    reference: tuple[str, ...] = ()
    entrants: list[BotStanding] = field(default_factory=list)
    #: The rule that orders :attr:`bots`, one of :data:`RANKINGS`.
    ranking: str = "trueskill"
    #: A Swiss, knockout or staged tournament's rounds (their pairings,
    #: matches and places); ``ranking: points`` then follows their places.
    rounds: Rounds | None = None
    #: ``format: gauntlet``: the challenger (the first bot), and its match
    #: against each opponent, in the ranking's order.
    challenger: str | None = None
    opponents: list[Opponent] = field(default_factory=list)
    #: The games of each node that played them (``--table nodes``).
    nodes: list[NodeTally] = field(default_factory=list)

    @property
    def time_odds(self) -> bool:
        """Some bot played under another clock than another bot (or than itself elsewhere)."""
        return len({clock for bot in self.bots for clock in bot.clocks}) > 1

    @property
    def rule(self) -> str:
        """The rule that orders :attr:`bots`, in one line."""
        if self.ranking != "points" or self.rounds is None:
            return RANKING_RULES[self.ranking]
        return rounds_rule(self.rounds)


def reference_rule(reference: Sequence[str], then: str) -> str:
    """How a ``format: reference`` tournament ranks its entrants, in one
    line; ``then`` is the rule that orders equal scores (:attr:`Standings.rule`)."""
    return (f"the score against the reference bots ({', '.join(reference)}): a win 1, a draw ½, a loss or a forfeit 0, "
            f"as a share of the games played against them; equal shares by {then}")


def rounds_rule(rounds: Rounds) -> str:
    """How a Swiss, knockout or staged tournament places its bots, in one line."""
    parts = []
    for state in reversed(rounds.stages):
        stage = state.stage
        if stage.format == "knockout":
            parts.append(f"the places of the knockout{f' of the top {stage.top}' if stage.top else ''} "
                         f"(1, 2, 3–4, 5–8, ...), then seed")
        elif stage.format == "adaptive":
            parts.append(f"the adaptive stage's Bradley–Terry ratings (its games only), then seed "
                         f"({settle_rule(stage.confidence, stage.within_elo, stage.settle_top, stage.max_games)})")
        else:
            bye = f", a bye as a {dict(win='won', draw='drawn', loss='lost')[stage.bye]} pairing" if stage.format == "swiss" else ""
            parts.append(f"the {STAGE_NAMES[stage.format]}'s points (win 1, draw ½{bye}), then Buchholz, then Sonneborn–Berger, then seed")
    return "; below them ".join(parts)


def compute_standings(
    records: Iterable[GameRecord],
    bot_names: Sequence[str] | None = None,
    rules: Rules = Rules(),
    *,
    at_limit: bool = False,
    versions: Mapping[str, str] | None = None,
    rounds: Rounds | None = None,
    challenger: str | None = None,
    remote: Collection[str] = (),
) -> Standings:
    """Fold ``records`` in ``index`` order into TrueSkill ratings and tallies,
    with the Elo fit, LOS, and for two bots the match figures and the
    ``rules``' SPRT (``at_limit``: no more games are scheduled).  The
    ``rules`` (:class:`~arena.formats.competition.Rules`) decide the rest:
    with ``reference`` bots (a ``format: reference`` tournament), the other
    bots are also ranked by their score against those; ``ranking`` is the
    rule that orders the bots, one of :data:`RANKINGS`, and with the
    ``rounds`` of a Swiss, knockout or staged tournament, ``points`` orders
    them by those rounds' places (:meth:`Rounds.places`), byes counted;
    ``withdrawn`` bots are marked; ``disqualified`` ones have every game
    scored as a loss (:func:`~arena.formats.scoring.scored`) and rank after
    every other bot.  ``versions`` names the version of each bot that plays
    now; games by other versions are counted apart.  ``remote`` bots are marked.
    With the ``challenger`` of a gauntlet, its match against each opponent
    (Elo difference, LOS, game pairs), and the LOS over the next bot only
    between bots that met (two opponents never do).

    ``bot_names`` lists bots to show even if they have no game yet (they keep
    the initial rating); bots found only in records are shown too.  Raises
    :class:`ValueError` for records that mix games, a bot playing itself, or a
    winner or forfeit that names no colour of the game or contradicts the other.
    """
    fold = StandingsFold(bot_names or (), rules)
    # Ties on index (which a well-formed schedule never makes) are broken by
    # game id, so the fold order never depends on the order of the input.
    ordered = sorted(scored(records, rules.disqualified), key=schedule_key)
    for record in ordered:
        fold.add(record, schedule_key(record))
    return fold.standings(at_limit=at_limit, versions=versions, rounds=rounds, challenger=challenger, records=ordered,
                          remote=remote)


class OutOfOrder(ValueError):
    """A game that a kept :class:`StandingsFold` rated past already: the
    fold cannot take it, the games are folded again from the start."""


#: The points of rating history a fold without the whole history keeps, over all bots, and the most and least
#: a bot keeps (the chart draws at most 240 a bot).
THINNED_POINTS, MAX_THINNED, MIN_THINNED = 100_000, 512, 16


class StandingsFold:
    """The fold of :func:`compute_standings`, a game at a time, in a state
    that can be kept (pickled) and carried on over games added later:
    whatever does not depend on the order of the games (the tallies, the
    pairs' scores, versions, clocks, move times) is counted as each game
    comes; TrueSkill, which does, in the order of the games' keys (schedule
    order) when :meth:`settle` is asked to, so that games may come in any
    order after the last one it rated.  Move times are summed in whole
    microseconds (records hold them to the microsecond): sums that do not
    depend on the order either, to the last bit."""

    def __init__(self, bot_names: Sequence[str] = (), rules: Rules = Rules(), *, history: bool = True) -> None:
        self._names = list(bot_names)
        self.bots: dict[str, BotStanding] = {name: BotStanding(name) for name in bot_names}
        #: What ranks the games folded (see :func:`compute_standings`).
        self.rules = rules
        self.disqualified = frozenset(rules.disqualified)
        #: Each bot's rating after each of its games (what the report's charts draw), kept or not.  Without
        #: it, a thinned history is kept (:meth:`_thin_history`): a point every so many games, a few hundred a
        #: bot at most, and fewer the more bots there are, so that a kept fold's size grows with the bots only.
        self.history = history
        self._thinned: dict[str, list[tuple[int, float, float]]] = {}
        self._every: dict[str, int] = {}
        self._most_points = max(MIN_THINNED, min(MAX_THINNED, THINNED_POINTS // max(1, len(self._names))))
        self.games: set[str] = set()
        self.total = 0
        self.pair_scores: dict[tuple[str, str], float] = {}
        self.pair_games: dict[tuple[str, str], int] = {}
        self.by_color: dict[str, Tally] = {}
        self.nodes = NodeTallies()
        self._last_played: dict[tuple[str, str], str] = {}
        self._move_us: dict[str, int] = {}
        self._ratings: dict[str, trueskill.Rating] = {}
        self._rated: dict[str, int] = {}
        #: The games not rated yet: (key, game id, first seat's bot, second's, whether the second won, whether drawn).
        self._pending: list[tuple[Any, str, str, str, bool, bool]] = []
        self._unrated: set[str] = set()
        self._last_key: Any = None

    @property
    def names(self) -> list[str]:
        """The bots shown even without a game, in the order given."""
        return self._names

    @property
    def last_key(self) -> Any:
        """The key of the last game rated (None before the first)."""
        return self._last_key

    def add(self, record: GameRecord, key: Any) -> None:
        """Fold ``record`` in, to be rated in the order of ``key``;
        :class:`OutOfOrder` when ``key`` is not past :attr:`last_key`."""
        if self._last_key is not None and key <= self._last_key:
            raise OutOfOrder(f"game {record.game_id} comes before the last game rated")
        if self.disqualified:
            record = scored_record(record, self.disqualified)
        first, second = _seats(record)
        winner = _winner(record)
        players = record.players
        bots, by_color, pair_games, pair_scores = self.bots, self.by_color, self.pair_games, self.pair_scores
        self.games.add(record.game)
        self.total += 1
        # (Each name, clock and score looked up once a game: a league folds millions of games.)
        seats = ((first, players[first], players[second]), (second, players[second], players[first]))
        shared_clock = _clock_text(record.time_control) if record.time_controls is None else None
        for color, name, opponent in seats:
            # (made only when first met: a bot's standing is a dozen fields)
            standing = bots.get(name) or bots.setdefault(name, BotStanding(name))
            clock = shared_clock or _clock_text(record.clock_of(color))
            standing.clocks[clock] = standing.clocks.get(clock, 0) + 1
            score = 0.5 if winner is None else float(winner == color)  # (side_score, inline)
            (by_color.get(color) or by_color.setdefault(color, Tally())).add(score)
            standing.add(score)
            pair = (name, opponent)
            pair_games[pair] = pair_games.get(pair, 0) + 1
            pair_scores[pair] = pair_scores.get(pair, 0.0) + score
        if record.versions is not None:
            for color, version in record.versions.items():
                played_by = bots[players[color]].versions
                played_by[version] = played_by.get(version, 0) + 1
                played = (players[color], version)
                self._last_played[played] = max(self._last_played.get(played, ""), record.ended_at)
        if record.forfeit_by is not None:
            forfeits = bots[players[record.forfeit_by]].forfeits
            forfeits[record.reason] = forfeits.get(record.reason, 0) + 1
            won = bots[players[second if record.forfeit_by == first else first]].forfeit_wins
            won[record.reason] = won.get(record.reason, 0) + 1
        # Seat 0 moves first and the players alternate (neither game has a
        # pass); the opening's moves were not the bots'.  (Each seat's moves
        # as a slice: a million games hold tens of millions of moves.)
        times, opening = move_times_of(record), len(record.opening_moves) % 2
        self.nodes.add(record, times)
        move_us = self._move_us
        for seat, (_, name, _) in ((opening, seats[0]), (1 - opening, seats[1])):
            played_times = times[seat::2]
            bots[name].moves += len(played_times)
            move_us[name] = move_us.get(name, 0) + round(sum(played_times) * 1000)
        self._pending.append((key, record.game_id, players[first], players[second], winner == second, winner is None))
        self._unrated.add(record.game_id)

    def unrated(self) -> set[str]:
        """The ids of the games folded but not rated yet (kept up to date)."""
        return self._unrated

    def settle(self, keep: int = 0) -> None:
        """Rate the games waiting, in the order of their keys, but the last
        ``keep`` of them (those a kept fold may yet see games come before)."""
        pending = self._pending
        pending.sort(key=lambda game: game[0])
        rated = len(pending) - keep
        if rated <= 0:
            return
        env = rating_env()
        ratings, counts, every = self._ratings, self._rated, self._every
        for _, _, first, second, second_won, drawn in pending[:rated]:
            _rate(env, ratings, first, second, second_won, drawn)
            for name in (first, second):
                counts[name] = count = counts.get(name, 0) + 1
                if self.history:
                    rating = ratings[name]
                    self.bots[name].history.append((count, rating.mu, rating.sigma))
                elif count % every.get(name, 1) == 0:
                    self._thin_history(name, count)
        self._last_key = pending[rated - 1][0]
        self._unrated.difference_update(game[1] for game in pending[:rated])
        del pending[:rated]

    def _thin_history(self, name: str, count: int) -> None:
        """Keep ``name``'s rating after its ``count``-th game, a point of its
        thinned history; past :attr:`_most_points`, every other point goes
        and the points come half as often."""
        rating = self._ratings[name]
        points = self._thinned.setdefault(name, [])
        points.append((count, rating.mu, rating.sigma))
        if len(points) > self._most_points:
            del points[::2]  # (the points at odd multiples of the old step: those left are the new step's)
            self._every[name] = self._every.get(name, 1) * 2

    def standings(
        self, *, at_limit: bool = False, versions: Mapping[str, str] | None = None, rounds: Rounds | None = None,
        challenger: str | None = None, records: Sequence[GameRecord] | None = None, remote: Collection[str] = (),
    ) -> Standings:
        """The standings of the games folded (see :func:`compute_standings`
        for the arguments); every game is rated first.  ``records``, the
        games in schedule order, are needed for a match of two bots and a
        gauntlet's challenger (their game pairs)."""
        if len(self.games) > 1:
            raise ValueError(f"records mix several games ({', '.join(sorted(self.games))}); rate each game apart")
        sprt, reference, ranking = self.rules.sprt, self.rules.reference, self.rules.ranking
        if ranking not in RANKINGS:
            raise ValueError(f"unknown ranking {ranking!r}; choose one of: {', '.join(RANKINGS)}")
        self.settle()
        bots = self.bots
        for name, rating in self._ratings.items():
            bots[name].mu, bots[name].sigma = rating.mu, rating.sigma
            if not self.history:  # the thinned history, to the rating now
                now = (self._rated[name], rating.mu, rating.sigma)
                thinned = self._thinned.get(name, [])
                bots[name].history = [*thinned] if thinned and thinned[-1] == now else [*thinned, now]
        for bot in bots.values():
            bot.move_ms = self._move_us.get(bot.name, 0) / 1000
            bot.versions = dict(sorted(bot.versions.items(), key=lambda v: (self._last_played[bot.name, v[0]], v[0]),
                                       reverse=True))
            bot.version = (versions or {}).get(bot.name) or next(iter(bot.versions), None)
        for name in self.rules.withdrawn:
            bots.setdefault(name, BotStanding(name)).withdrawn_by_organiser = True
        for name in self.disqualified:
            bots.setdefault(name, BotStanding(name)).disqualified = True
        for name in remote:
            if name in bots:
                bots[name].remote = True
        pair_scores = self.pair_scores
        fit = fit_elo_tally({pair: (pair_scores[pair], games) for pair, games in self.pair_games.items() if pair[0] < pair[1]})
        for standing in bots.values():
            if standing.name in fit.elo:
                standing.elo, standing.elo_margin = fit.elo[standing.name], fit.margin(standing.name)
        _tie_breaks(bots, pair_scores)
        if rounds is not None:
            ranked = _placed(bots, rounds, ranking)
        else:
            ranked = _ranked(list(bots.values()), ranking)
        for standing, below in zip(ranked, ranked[1:]):
            adjacent_met = challenger is None or challenger in (standing.name, below.name)
            if standing.name in fit.elo and below.name in fit.elo and adjacent_met:
                standing.los_next = fit.los(standing.name, below.name)
        if records is None and (challenger is not None or len(ranked) == 2):
            raise ValueError("a match of two bots, or a gauntlet, is ranked from its records (their game pairs)")
        opponents = []
        if challenger is not None:
            for bot in ranked:
                met = [r for r in records or () if set(r.players.values()) == {challenger, bot.name}]
                if bot.name != challenger and met:
                    opponents.append(Opponent(bot.name, match_statistics(*scores_of(met, challenger))))
        match = match_bots = status = None
        if len(ranked) == 2:
            first = self._names[0] if self._names else ranked[0].name
            match_bots = (first, next(b.name for b in ranked if b.name != first))
            first_scores, pairs = scores_of(records or (), first)
            match = match_statistics(first_scores, pairs)
            if sprt is not None:
                status = sprt_status(sprt, pairs, at_limit=at_limit)
        crosstable = Crosstable([bot.name for bot in ranked], pair_scores, self.pair_games)
        return Standings(
            game=next(iter(self.games), None),
            bots=ranked,
            crosstable=crosstable,
            by_color=self.by_color,
            total_games=self.total,
            elo_regularized=fit.regularized,
            match=match,
            match_bots=match_bots,
            sprt=status,
            reference=tuple(reference),
            entrants=reference_ranking(ranked, crosstable, reference) if reference else [],
            ranking=ranking,
            rounds=rounds,
            challenger=challenger,
            opponents=opponents,
            nodes=self.nodes.tallies(),
        )


class Crosstable(Mapping[str, Mapping[str, tuple[float, int]]]):
    """Row bot -> column bot -> (row's score against column, games between
    them) for every two distinct bots of ``names`` (in that order), from the
    scores and games of the pairs that met.  A cell is made when it is read:
    a field of n bots has n² cells, and a results directory that met few of
    them (a Swiss, or a tournament.json of thousands of bots and no game)
    must not cost n² to read."""

    def __init__(self, names: Sequence[str], scores: Mapping[tuple[str, str], float],
                 games: Mapping[tuple[str, str], int]) -> None:
        self._names = list(names)
        self._known = frozenset(self._names)
        self._place = {name: i for i, name in enumerate(self._names)}
        self._scores, self._games = scores, games
        self._met: dict[str, list[str]] = {}
        for row, col in games:
            self._met.setdefault(row, []).append(col)

    def __getitem__(self, row: str) -> Mapping[str, tuple[float, int]]:
        if row not in self._known:
            raise KeyError(row)
        return _CrosstableRow(self, row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def met(self, row: str) -> dict[str, tuple[float, int]]:
        """The cells of ``row``'s opponents that it met, in the order of the names."""
        opponents = sorted((col for col in self._met.get(row, ()) if col in self._known), key=self._place.__getitem__)
        return {col: self._cell(row, col) for col in opponents}

    def _cell(self, row: str, col: str) -> tuple[float, int]:
        return self._scores.get((row, col), 0.0), self._games.get((row, col), 0)


class _CrosstableRow(Mapping[str, tuple[float, int]]):
    def __init__(self, table: Crosstable, row: str) -> None:
        self._table, self._row = table, row

    def __getitem__(self, col: str) -> tuple[float, int]:
        if col == self._row or col not in self._table._known:
            raise KeyError(col)
        return self._table._cell(self._row, col)

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._table._names if name != self._row)

    def __len__(self) -> int:
        return len(self._table._names) - 1


def _clock_text(control: Mapping[str, int]) -> str:
    """A record's time control as the tables show it (``5+0.1``, ``move 0.5``)."""
    return _clock_text_of(tuple(control.items()))


@functools.lru_cache(maxsize=64)
def _clock_text_of(control: tuple[tuple[str, int], ...]) -> str:
    # A league has a few time controls and every game names one: each is worded once.
    return str(TimeControl.from_json(dict(control)))


def _placed(bots: dict[str, BotStanding], rounds: Rounds, ranking: str) -> list[BotStanding]:
    """The bots with their byes, Buchholz and places from ``rounds``, in the
    order of ``ranking`` (``points``: the places; bots the rounds do not
    place, such as one that joined after the last round was paired, last)."""
    for name, points in rounds.bye_points.items():
        bots.setdefault(name, BotStanding(name)).bye_points = points
    first = rounds.stages[0] if rounds.stages else None
    if first is not None and first.stage.format != "knockout":
        # What the first stage's order used, byes counted.
        for name, bh in first.buchholz.items():
            if name in bots:
                bot = bots[name]
                bot.points, bot.buchholz, bot.sonneborn_berger = first.points[name], bh, first.sonneborn_berger[name]
    places = rounds.places()
    for name, place in places:
        if name in bots and not bots[name].disqualified:  # ranked after every other bot, whatever its place
            bots[name].place = place
    if ranking != "points":
        return _ranked(list(bots.values()), ranking)
    order = {name: i for i, (name, _) in enumerate(places)}
    ranked = sorted(bots.values(), key=lambda b: (b.disqualified, order.get(b.name, len(order)), b.name))
    _set_ranks(ranked, lambda b: b.place if b.place is not None and b.place[0] != b.place[1] else b.name)
    return ranked


def _tie_breaks(bots: Mapping[str, BotStanding], pair_scores: Mapping[tuple[str, str], float]) -> None:
    """Set each bot's Sonneborn–Berger and its score among the bots with its score."""
    sb = sonneborn_berger(pair_scores, {name: bot.score for name, bot in bots.items()})
    for bot in bots.values():
        bot.sonneborn_berger = sb[bot.name]
        bot.tied_score = sum(
            points for (name, opponent), points in pair_scores.items()
            if name == bot.name and bots[opponent].score == bot.score
        )


def _ranked(bots: list[BotStanding], ranking: str) -> list[BotStanding]:
    """``bots`` in the order of ``ranking``, with their ranks set."""
    if ranking == "points":
        def key(b: BotStanding) -> tuple[float, ...]:
            return (-b.score, -b.tied_score, -b.sonneborn_berger, -b.wins)
    elif ranking == "elo":
        def key(b: BotStanding) -> tuple[float, ...]:
            return (b.elo is None, -(b.elo or 0.0), -b.score)
    else:
        def key(b: BotStanding) -> tuple[float, ...]:
            return (-b.rating, -b.score)
    ranked = sorted(bots, key=lambda b: (b.disqualified, key(b), b.name))
    _set_ranks(ranked, (lambda b: (b.disqualified, key(b))) if ranking == "points" else lambda b: b.name)
    return ranked


def _set_ranks(ranked: Sequence[BotStanding], key: Callable[[BotStanding], object]) -> None:
    """Number ``ranked`` from 1; bots whose ``key`` is equal share the first one's rank."""
    for place, bot in enumerate(ranked, start=1):
        before = ranked[place - 2] if place > 1 else None
        if before is not None and key(before) == key(bot):
            bot.rank = before.rank
            bot.shared_rank = before.shared_rank = True
        else:
            bot.rank, bot.shared_rank = place, False


def reference_ranking(
    ranked: Sequence[BotStanding], crosstable: Mapping[str, Mapping[str, tuple[float, int]]], reference: Sequence[str]
) -> list[BotStanding]:
    """The bots outside ``reference`` by their score rate against the
    reference bots (a course's grading rule: the same opponents for every
    entrant), bots without such a game last; then by their place in
    ``ranked`` (the tournament's ranking rule and its tie-breaks), then by
    name.  The list is a new order of the same bots: their
    :attr:`BotStanding.rank` stays that of the main ranking."""
    place = {bot.name: i for i, bot in enumerate(ranked)}

    def rate(bot: BotStanding) -> float:
        cells = [crosstable.get(bot.name, {}).get(ref, (0.0, 0)) for ref in reference]
        score, games = sum(s for s, _ in cells), sum(g for _, g in cells)
        return -(score / games) if games else 1.0

    return sorted((bot for bot in ranked if bot.name not in reference), key=lambda b: (rate(b), place[b.name], b.name))


def _rate(
    env: trueskill.TrueSkill, ratings: dict[str, trueskill.Rating], first: str, second: str, second_won: bool, drawn: bool
) -> None:
    a = ratings[first] if first in ratings else env.create_rating()
    b = ratings[second] if second in ratings else env.create_rating()
    if second_won:
        b, a = _rate_1vs1(env, b, a, False)
    else:
        a, b = _rate_1vs1(env, a, b, drawn)
    ratings[first], ratings[second] = a, b


def _rate_1vs1(
    env: trueskill.TrueSkill, winner: trueskill.Rating, loser: trueskill.Rating, drawn: bool
) -> tuple[trueskill.Rating, trueskill.Rating]:
    """``trueskill.rate_1vs1`` in closed form.  Between two players the
    factor graph holds one truncation, which its message passing settles
    in one pass, so the update is exactly this (the same to ~1e-13, as the
    tests check), at 3 us instead of 450 us: a tournament of thousands of
    instant games spent more time rating than playing."""
    var_w = winner.sigma**2 + env.tau**2
    var_l = loser.sigma**2 + env.tau**2
    c2 = var_w + var_l + 2 * env.beta**2
    c = math.sqrt(c2)
    t = (winner.mu - loser.mu) / c
    margin = _draw_margin(env) / c
    cdf, pdf = env.cdf, env.pdf
    if drawn:
        a, b = margin - abs(t), -margin - abs(t)
        denom = cdf(a) - cdf(b)
        if not denom:
            return trueskill.rate_1vs1(winner, loser, drawn=True, env=env)  # raises as it always did
        v_abs = (pdf(b) - pdf(a)) / denom
        v = -v_abs if t < 0 else v_abs
        w = v_abs * v_abs + (a * pdf(a) - b * pdf(b)) / denom
    else:
        x = t - margin
        denom = cdf(x)
        v = pdf(x) / denom if denom else -x
        w = v * (v + x)
    if not 0 < w < 1:
        return trueskill.rate_1vs1(winner, loser, drawn=drawn, env=env)
    return (
        _rating(env, winner.mu + var_w / c * v, math.sqrt(var_w * (1 - var_w / c2 * w))),
        _rating(env, loser.mu - var_l / c * v, math.sqrt(var_l * (1 - var_l / c2 * w))),
    )


def _rating(env: trueskill.TrueSkill, mu: float, sigma: float) -> trueskill.Rating:
    """``env.create_rating(mu, sigma)``: the same precision and precision
    times mean (what a rating holds), to the bit, without the checks of
    what it was given on the way (two ratings a game: a first read of a
    league rates a million)."""
    if not sigma:
        return env.create_rating(mu, sigma)  # (raises as it always did)
    rating = _bare_rating(trueskill.Rating)
    rating.pi = pi = sigma ** -2  # (Gaussian.__init__'s arithmetic)
    rating.tau = pi * mu
    return rating


_bare_rating = trueskill.Rating.__new__


@functools.lru_cache(maxsize=8)
def _draw_margin(env: trueskill.TrueSkill) -> float:
    # An inverse normal CDF, the same for every game of an environment.
    return trueskill.calc_draw_margin(env.draw_probability, 2, env)


class RatingFold:
    """TrueSkill ratings and each bot's results, folded one game at a time
    in the order given, as :class:`StandingsFold` rates them: the live leader's fold."""

    def __init__(self) -> None:
        self.env = rating_env()
        self.ratings: dict[str, trueskill.Rating] = {}
        self.tallies: dict[str, Tally] = {}

    def add(self, record: GameRecord) -> tuple[str, str, str | None]:
        """Fold ``record`` in; its seats' colours and the winning colour (None: a draw)."""
        first, second = _seats(record)
        winner = _winner(record)
        self.rate(record.players[first], record.players[second], winner == second, winner is None)
        return first, second, winner

    def rate(self, first: str, second: str, second_won: bool, drawn: bool) -> None:
        """Fold in a game of ``first`` (the first seat's bot) and ``second``, by its result."""
        for name, score in zip((first, second), _seat_scores(second_won, drawn)):
            self.tallies.setdefault(name, Tally()).add(score)
        _rate(self.env, self.ratings, first, second, second_won, drawn)


class RunningLeader:
    """The leader of a tournament in progress, for a progress line, by the
    tournament's ranking rule, as :func:`compute_standings` would rank the
    games in so far, folded one game at a time as they come in:

    - ``trueskill``: the ratings over the games ``0 .. k-1`` of the schedule
      (the longest run of finished games from the start, since the ratings
      depend on the order), folded with the same :class:`RatingFold`;
    - ``points``: the points, then the score among the bots tied on points,
      Sonneborn–Berger, wins; with the ``rounds`` of a Swiss, knockout or
      staged tournament, their first place;
    - ``elo``: the Elo fit, refitted at most every :attr:`refit_every_s`
      seconds (a fit of 48 bots takes some 80 ms: refitted after each game it
      would cost more than a game of instant bots).

    The ``rules``' ``ranking`` is the rule; a ``disqualified`` bot's games
    count as its losses, and it never leads."""

    def __init__(self, rules: Rules = Rules(), *, refit_every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if rules.ranking not in RANKINGS:
            raise ValueError(f"unknown ranking {rules.ranking!r}; choose one of: {', '.join(RANKINGS)}")
        self.ranking = rules.ranking
        self._disqualified = frozenset(rules.disqualified)
        self._fold = RatingFold()
        #: The games past the first one not in yet, by index: (first seat's bot, second's, whether the second won, drawn).
        self._waiting: dict[int, tuple[str, str, bool, bool]] = {}
        self._next = 0
        self._tallies: dict[str, Tally] = {}
        self._pair_scores: dict[tuple[str, str], float] = {}
        #: By pair (names in order), the first's points and their games (as :func:`fit_elo_tally` takes them), and the games.
        self._elo_tally: dict[tuple[str, str], tuple[float, int]] = {}
        self._elo_games = 0
        self.refit_every_s, self._clock = refit_every_s, clock
        self._elo: dict[str, float] = {}
        self._fitted_at: float | None = None
        self._fitted_games = 0

    def add(self, record: GameRecord) -> None:
        record = scored([record], self._disqualified)[0]
        if self.ranking != "trueskill":  # points and Elo do not depend on the order of the games
            first, second = _seats(record)
            winner = _winner(record)
            names = (record.players[first], record.players[second])
            for color, name, opponent in ((first, *names), (second, *reversed(names))):
                score = side_score(winner, color)
                self._tallies.setdefault(name, Tally()).add(score)
                self._pair_scores[name, opponent] = self._pair_scores.get((name, opponent), 0.0) + score
            a, b, points = (*names, side_score(winner, first)) if names[0] < names[1] else \
                (*reversed(names), 1.0 - side_score(winner, first))
            tallied, games = self._elo_tally.get((a, b), (0.0, 0))
            self._elo_tally[a, b] = (tallied + points, games + 1)
            self._elo_games += 1
            return
        first, second = _seats(record)
        winner = _winner(record)
        self._waiting[record.index] = (record.players[first], record.players[second], winner == second, winner is None)
        self._drain()

    def _drain(self) -> None:
        """Rate the games waiting from the next index on, as long as they follow one another."""
        while (game := self._waiting.pop(self._next, None)) is not None:
            self._next += 1
            self._fold.rate(*game)

    @classmethod
    def carried(cls, rules: Rules, fold: StandingsFold, index_of: Callable[[str], int | None]) -> RunningLeader | None:
        """The leader of the games ``fold`` folded (kept, its last games not
        rated: :meth:`StandingsFold.settle`), the same as if each had been
        given to :meth:`add`; ``index_of`` gives a game's index from its id.  None
        when that cannot be told from the fold: with TrueSkill, when its
        rated games are not the schedule's first ones (a game missing among
        them: this rates the games from the first on, up to the first missing)."""
        leader = cls(rules)
        tallies = {name: Tally(wins=bot.wins, draws=bot.draws, losses=bot.losses) for name, bot in fold.bots.items()}
        if leader.ranking != "trueskill":
            leader._tallies = {name: tally for name, tally in tallies.items() if tally.games}
            leader._pair_scores = dict(fold.pair_scores)
            leader._elo_tally = {pair: (fold.pair_scores[pair], games) for pair, games in fold.pair_games.items()
                                 if pair[0] < pair[1]}
            leader._elo_games = fold.total
            return leader
        waiting = {}
        for _, game_id, first, second, second_won, drawn in fold._pending:
            index = index_of(game_id)
            if index is None or index in waiting:
                return None
            waiting[index] = (first, second, second_won, drawn)
            # (the tallies of the games rated: those waiting are counted as they are rated)
            for name, score in zip((first, second), _seat_scores(second_won, drawn)):
                tally = tallies[name]
                if score == 1.0:
                    tally.wins -= 1
                elif score == 0.5:
                    tally.draws -= 1
                else:
                    tally.losses -= 1
        rated = fold.total - len(waiting)
        # The rated games precede those waiting: they are indexes 0 .. rated-1 when the first waiting is rated.
        if rated != min(waiting, default=rated):
            return None
        leader._fold.ratings = dict(fold._ratings)
        leader._fold.tallies = {name: tally for name, tally in tallies.items() if tally.games}
        leader._waiting, leader._next = waiting, rated
        leader._drain()
        return leader

    def leader(self, rounds: Rounds | None = None) -> tuple[str, float | None] | None:
        """The best bot's name and its figure under the rule (its
        conservative rating, points or Elo; None for a place in ``rounds``),
        or None before the first game."""
        if self.ranking == "points" and rounds is not None:
            if not self._tallies:  # the places are then the seeding's
                return None
            placed = [name for name, _ in rounds.places() if name not in self._disqualified]
            return (placed[0], None) if placed else None
        if self.ranking == "points":
            return self._points_leader()
        if self.ranking == "elo":
            return self._elo_leader()
        ratings, tallies = self._fold.ratings, self._fold.tallies
        candidates = [n for n in ratings if n not in self._disqualified]
        if not candidates:
            return None
        name = min(candidates, key=lambda n: (-conservative(ratings[n].mu, ratings[n].sigma), -tallies[n].score, n))
        return name, conservative(ratings[name].mu, ratings[name].sigma)

    def describe(self, rounds: Rounds | None = None) -> str | None:
        """``alpha (27.1)``, ``alpha (7.5 points)``, ``alpha (Elo +52)``, ``alpha`` (first place), or None before the first game."""
        best = self.leader(rounds)
        if best is None:
            return None
        name, figure = best
        if figure is None:
            return name
        if self.ranking == "points":
            return f"{name} ({figure:g} point{'' if figure == 1 else 's'})"
        return f"{name} (Elo {figure:+.0f})" if self.ranking == "elo" else f"{name} ({figure:.1f})"

    def _points_leader(self) -> tuple[str, float] | None:
        scores = {name: tally.score for name, tally in self._tallies.items()}
        candidates = [name for name in scores if name not in self._disqualified]
        if not candidates:
            return None
        top = max(scores[name] for name in candidates)
        tied = [name for name in candidates if scores[name] == top]
        if len(tied) > 1:
            # The tie-breaks of compute_standings, over the tied bots only.
            tied_with = {name for name, score in scores.items() if score == top}

            def key(name: str) -> tuple[float, float, float, str]:
                among = sum(p for (bot, opponent), p in self._pair_scores.items() if bot == name and opponent in tied_with)
                sb = sum(p * scores[opponent] for (bot, opponent), p in self._pair_scores.items() if bot == name)
                return -among, -sb, -self._tallies[name].wins, name

            tied.sort(key=key)
        return tied[0], top

    def _elo_leader(self) -> tuple[str, float] | None:
        now = self._clock()
        stale = self._fitted_games != self._elo_games
        if stale and (self._fitted_at is None or now - self._fitted_at >= self.refit_every_s):
            self._elo = fit_elo_tally(self._elo_tally).elo
            self._fitted_at, self._fitted_games = now, self._elo_games
        candidates = [name for name in self._elo if name not in self._disqualified]
        if not candidates:
            return None
        name = min(candidates, key=lambda n: (-self._elo[n], -self._tallies[n].score, n))
        return name, self._elo[name]


def _seats(record: GameRecord) -> tuple[str, str]:
    colors = record.colors
    if len(colors) != 2:
        raise ValueError(f"game {record.game_id}: expected 2 players, got {len(colors)}")
    if record.players[colors[0]] == record.players[colors[1]]:
        raise ValueError(f"game {record.game_id}: bot {record.players[colors[0]]!r} plays itself")
    return colors[0], colors[1]


def _seat_scores(second_won: bool, drawn: bool) -> tuple[float, float]:
    """What the first seat and the second scored in a game of that result."""
    return (0.5, 0.5) if drawn else (0.0, 1.0) if second_won else (1.0, 0.0)


def _winner(record: GameRecord) -> str | None:
    """The winning colour, or ``None`` for a draw, after checking the record
    agrees with itself: a forfeit always gives the game to the opponent."""
    if record.winner is not None and record.winner not in record.players:
        raise ValueError(f"game {record.game_id}: winner {record.winner!r} is not a colour of this game")
    if record.forfeit_by is None:
        return record.winner
    if record.forfeit_by not in record.players:
        raise ValueError(f"game {record.game_id}: forfeit_by {record.forfeit_by!r} is not a colour of this game")
    if record.winner is None or record.winner == record.forfeit_by:
        raise ValueError(
            f"game {record.game_id}: {record.forfeit_by} forfeited ({record.reason}) "
            f"but the recorded winner is {record.winner!r}"
        )
    return record.winner
