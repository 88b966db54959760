"""The champion of a finished tournament, as the live view's banner names
it: the bot, and the rule that made it champion (the final it won, or the
ranking that put it first)."""

from __future__ import annotations

from dataclasses import dataclass

from arena.results.reading import ReadResults
from arena.results.report.bracket import score_text

__all__ = ["Champion", "champion_of"]

_DECIDED_BY = {"tie-break": ", in the tie-break games", "seed": ", as the better seed after a tied match",
               "walkover": ", by walkover"}


@dataclass(frozen=True)
class Champion:
    name: str
    #: Why it is champion, in one line ("won the final 2–1 against bob").
    rule: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "rule": self.rule}


def champion_of(results: ReadResults) -> Champion | None:
    """The winner of ``results``, which the caller knows are finished; None
    when nobody wins (no game played, an SPRT match, which decides a
    hypothesis and not a winner)."""
    standings = results.standings(at_limit=True)
    if standings.sprt is not None or not standings.bots or not standings.total_games:
        return None
    last = results.rounds.stages[-1] if results.rounds is not None and results.rounds.stages else None
    if last is not None and last.stage.format == "knockout" and last.matches and len(last.matches[-1]) == 1:
        final = last.matches[-1][0]
        if final.winner is not None:
            score = final.score if final.winner == final.bots[0] else final.score[::-1]
            how = _DECIDED_BY.get(final.decided_by, "")
            return Champion(final.winner, f"won the final {score_text(score[0])}–{score_text(score[1])} "
                                          f"against {final.loser}{how}")
    return Champion(standings.bots[0].name, f"first by {standings.rule}")
