"""The one score of a game and the one tally of results, and the points
tables' tie-breaks (Buchholz, Sonneborn–Berger) built on them.  Every table,
the Swiss's points, the live leader and a match's figures count a game
through :func:`score_of` and :class:`Tally`: a win 1, a draw ½, a loss 0,
a forfeit a loss for the bot that forfeited.  Pure: no I/O."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.game.records import GameRecord

__all__ = ["DISQUALIFIED_DETAIL", "Tally", "buchholz", "points_order", "score_of", "scored", "scored_record",
           "side_score", "sonneborn_berger", "tiebreak_order", "total_scores"]

#: The detail of a game scored as a disqualified bot's loss.
DISQUALIFIED_DETAIL = "scored as a loss: the bot is disqualified (disqualified: in the tournament file)"


def score_of(record: GameRecord, bot: str) -> float:
    """``bot``'s score in a game it played: 1, 0.5 for a draw, or 0."""
    return side_score(record.name_of(record.winner), bot)


def scored(records: Iterable[GameRecord], disqualified: Collection[str]) -> list[GameRecord]:
    """``records`` as they score (see :func:`scored_record`)."""
    return [scored_record(record, disqualified) for record in records]


def scored_record(record: GameRecord, disqualified: Collection[str]) -> GameRecord:
    """``record`` as it scores: a game of one ``disqualified`` bot is its
    loss, a forfeit (reason ``disqualified``) its opponent wins, whatever was
    played; a game between two disqualified bots scores as played.  The
    records on disk are never changed: this is how they count."""
    out_of_it = [color for color, name in record.players.items() if name in disqualified]
    if len(out_of_it) == 1 and record.reason != "disqualified":
        loser = out_of_it[0]
        winner = next(color for color in record.players if color != loser)
        return dataclasses.replace(record, winner=winner, forfeit_by=loser, reason="disqualified",
                                   detail=DISQUALIFIED_DETAIL)
    return record


def side_score(winner: str | None, side: str) -> float:
    """What ``side`` scored in a game ``winner`` won: both are colours, or
    both names; ``winner`` None for a draw."""
    return 0.5 if winner is None else float(winner == side)


def total_scores(points: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """Each bot's total points from the points it scored against each opponent."""
    totals: dict[str, float] = {}
    for (bot, opponent), p in points.items():
        totals[bot] = totals.get(bot, 0.0) + p
        totals.setdefault(opponent, 0.0)
    return totals


def buchholz(points: Mapping[tuple[str, str], float], scores: Mapping[str, float]) -> dict[str, float]:
    """Buchholz: the sum of the final scores of the opponents a bot met (a
    bye has no opponent and adds nothing)."""
    opponents: dict[str, set[str]] = {b: set() for b in scores}
    for bot, opponent in points:
        opponents.setdefault(bot, set()).add(opponent)
    return {b: sum(scores[o] for o in opps) for b, opps in opponents.items()}


def sonneborn_berger(points: Mapping[tuple[str, str], float], scores: Mapping[str, float]) -> dict[str, float]:
    """Sonneborn–Berger: the sum, over a bot's opponents, of the points it
    scored against each times that opponent's final score."""
    sb = {b: 0.0 for b in scores}
    for (bot, opponent), p in points.items():
        sb[bot] = sb.get(bot, 0.0) + p * scores[opponent]
    return sb


@dataclass(kw_only=True)
class Tally:
    """Wins, draws and losses of one side, and the points they make (a win
    1, a draw ½): a bot in the standings, the first bot of a match."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, score: float) -> None:
        """Count one game the side scored ``score`` in (1, 0.5 or 0)."""
        if score == 1.0:
            self.wins += 1
        elif score == 0.5:
            self.draws += 1
        else:
            self.losses += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    @property
    def score_pct(self) -> float | None:
        """Score as a percentage of games played; ``None`` with no games."""
        return 100 * self.score / self.games if self.games else None


def points_order(seeding: Sequence[str], points: Mapping[tuple[str, str], float],
                 scores: Mapping[str, float]) -> list[str]:
    """``seeding``'s bots ordered by score (byes included in ``scores``),
    then Buchholz, then Sonneborn–Berger, then seeding.  ``points[(a, b)]``
    is what ``a`` scored against ``b``."""
    return tiebreak_order(seeding, scores, buchholz(points, scores), sonneborn_berger(points, scores))


def tiebreak_order(seeding: Sequence[str], scores: Mapping[str, float], bh: Mapping[str, float],
                   sb: Mapping[str, float]) -> list[str]:
    """:func:`points_order` with the Buchholz ``bh`` and Sonneborn–Berger ``sb`` already summed."""
    position = {b: i for i, b in enumerate(seeding)}
    return sorted(seeding, key=lambda b: (-scores.get(b, 0.0), -bh.get(b, 0.0), -sb.get(b, 0.0), position[b]))
