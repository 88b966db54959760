"""The report's drawing of a Swiss, knockout or staged tournament's rounds.

A knockout stage is drawn as a bracket: a column per round, a box per match
(both bots with their seeds, the score, the winner marked, how it was
decided), lines joining each match to the one its winner plays next.  A
Swiss or round-robin stage is drawn as a card per round with its pairings
and byes.  Every game of a match or pairing is a small numbered link that
opens it in the report's viewer, by the same ``#game=ID&ply=0`` address the
viewer's script writes (``hashFor`` in ``viewer.js``).

Built on the server, as plain HTML with the report's stylesheet, so that the
drawing needs no script: this module says what each stage shows, the
template ``templates/bracket.html`` draws it, escaping every bot name (names
come from the records and ``tournament.json``, both untrusted).  Pure: a
function of the :class:`~arena.formats.rounds.Rounds` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from arena.formats.rounds import Match, Pairing, Rounds, StageState
from arena.formats.stages import STAGE_NAMES
from arena.results.pages import Markup, render

__all__ = ["game_href", "rounds_html", "score_text"]

#: What ``encodeURIComponent`` leaves as it is: a link built here then reads
#: exactly as one the viewer builds for the same game.
_URI_COMPONENT_SAFE = "-_.!~*'()"


def game_href(game_id: str) -> str:
    """The viewer's address of a game at its start (``hashFor(id, 0)``)."""
    return f"#game={quote(game_id, safe=_URI_COMPONENT_SAFE)}&ply=0"


def rounds_html(rounds: Rounds) -> Markup:
    """Every stage paired so far: a knockout's bracket, a Swiss or
    round-robin's rounds; empty when no stage is."""
    staged = len(rounds.stages) > 1
    stages = [_knockout(state, staged) if state.stage.format == "knockout" else _points_stage(state, staged)
              for state in rounds.stages]
    return Markup(render("bracket.html", stages=stages))


def score_text(x: float) -> str:
    """A score as a chess table writes it: ``2½``, ``½``."""
    whole, half = divmod(round(2 * x), 2)
    return f"{whole or ''}½" if half else str(whole)


# ---- knockout -------------------------------------------------------------------


def _knockout(state: StageState, staged: bool) -> dict[str, Any]:
    where = f"stage {state.number}, " if staged else ""
    top = f"the top {len(state.field)} of stage {state.number - 1}" if state.stage.top and staged else f"{len(state.field)} bots"
    rounds = max(state.total_rounds, len(state.matches))
    columns = []
    for index in range(rounds):
        matches: Sequence[Match | None] = state.matches[index] if index < len(state.matches) else \
            [None] * 2 ** (rounds - index - 1)  # not paired yet: empty boxes hold the bracket's shape
        number = state.pairings[index].round if index < len(state.pairings) else None
        columns.append(_ko_column(state, index, rounds, matches, number))
    return {"knockout": True, "title": f"Bracket ({where}knockout of {top})", "number": state.number,
            "columns": columns, "champion": _champion(state, rounds)}


def _ko_column(state: StageState, index: int, rounds: int, matches: Sequence[Match | None],
               number: int | None) -> dict[str, Any]:
    name = state.round_name(index)
    # Each slot says which line joins it to the next round: the upper and the
    # lower match of a pair meet halfway; the final runs straight to the winner.
    last = index == rounds - 1
    slots = [(("straight" if _final_decided(state, rounds) else "") if last else ("upper" if i % 2 == 0 else "lower"),
              _match_box(state, match, fed=index > 0)) for i, match in enumerate(matches)]
    return {"number": number, "name": name, "label": name[:1].upper() + name[1:], "slots": slots}


def _final_decided(state: StageState, rounds: int) -> bool:
    return len(state.matches) == rounds and len(state.matches[-1]) == 1 and state.matches[-1][0].winner is not None


def _champion(state: StageState, rounds: int) -> tuple[str, int | None] | None:
    """The winner and its seed, in a column of its own after the final, once it is decided."""
    if not _final_decided(state, rounds):
        return None
    match = state.matches[-1][0]
    winner = match.winner or ""
    return winner, match.seeds[0] if winner == match.bots[0] else match.seeds[1]


def _match_box(state: StageState, match: Match | None, *, fed: bool) -> dict[str, Any]:
    box: dict[str, Any] = {"match": match, "classes": "match" + (" fed" if fed else "")}
    if match is None or match.bots[1] is None:
        return box
    marks = {True: " winner", False: " loser", None: ""}
    box["rows"] = [(bot, seed, score_text(score), marks[None if match.winner is None else bot == match.winner])
                   for bot, seed, score in zip(match.bots, match.seeds, match.score)]
    box["how"] = _how(state, match)
    box["links"] = _games_links(match.games, 2 * state.stage.games_per_match)
    return box


def _how(state: StageState, match: Match) -> str:
    """How the match was decided, in a few words that fit its box."""
    extra = match.pairs - state.stage.games_per_match
    pairs = f"{match.pairs} game pair{'' if match.pairs == 1 else 's'}"
    return {
        "score": "won on score",
        "tie-break": f"won in the tie-breaks: {extra} extra game pair{'' if extra == 1 else 's'}",
        "seed": f"tied after {pairs}: the better seed goes through",
        "walkover": "walkover: the other bot left",
    }.get(match.decided_by, "being played" if match.games else "to be played")


def _games_links(games: Sequence[str], regular: int) -> list[dict[str, Any]]:
    """A numbered link per game; those after the first ``regular`` follow a
    "tie-break" mark, as they were added while the match was tied."""
    return [{"id": game_id, "href": game_href(game_id), "tie_break": k == regular + 1}
            for k, game_id in enumerate(games, start=1)]


# ---- Swiss and round-robin --------------------------------------------------------


def _points_stage(state: StageState, staged: bool) -> dict[str, Any]:
    where = f"stage {state.number}, " if staged else ""
    kind = STAGE_NAMES[state.stage.format]
    of = "" if state.stage.format == "adaptive" else f" of {state.total_rounds}"  # known once it stops
    return {"knockout": False, "title": f"Rounds ({where}{kind}, {len(state.pairings)}{of} paired)",
            "number": state.number, "cards": [_round_card(state, pairing) for pairing in state.pairings]}


def _round_card(state: StageState, pairing: Pairing) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for a, b in pairing.pairs:
        result = state.results.get((pairing.round, a, b)) if b is not None else None
        if b is None or result is None or (not result.counted and not result.games):
            # A bot that left before the pairing was played: it plays nothing.
            rows.append({"kind": "left", "a": a, "b": b or ""})
            continue
        ahead = None if not result.games or result.score[0] == result.score[1] else result.score[0] > result.score[1]
        marks = {True: " ahead", False: " behind", None: ""}
        # Played, then a bot left: the games stay on show, out of the points.
        rows.append({
            "kind": "pairing", "a": a, "b": b, "counted": result.counted,
            "classes": f'pairing{"" if result.played or not result.counted else " open"}{"" if result.counted else " left"}',
            "marks": (marks[ahead], marks[None if ahead is None else not ahead]),
            "score": f"{score_text(result.score[0])}–{score_text(result.score[1])}" if result.games else "–",
            "links": _games_links(result.games, len(result.games)),
        })
    for bot in pairing.byes:
        how = "sat out: scores nothing" if state.stage.format == "adaptive" else f"bye: scores a {state.stage.bye}"
        rows.append({"kind": "bye", "a": bot, "how": how})
    return {"round": pairing.round, "rows": rows}
