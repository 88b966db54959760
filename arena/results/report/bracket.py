"""The report's drawing of a Swiss, knockout or staged tournament's rounds.

A knockout stage is drawn as a bracket: a column per round, a box per match
(both bots with their seeds, the score, the winner marked, how it was
decided), lines joining each match to the one its winner plays next.  A
Swiss or round-robin stage is drawn as a card per round with its pairings
and byes.  Every game of a match or pairing is a small numbered link that
opens it in the report's viewer, by the same ``#game=ID&ply=0`` address the
viewer's script writes (``hashFor`` in ``viewer.js``).

Built on the server, as plain HTML with the report's stylesheet, so that the
drawing needs no script and every bot name goes through
:func:`arena.base.text.safe`: names come from the records and
``tournament.json``, both untrusted.  Pure: a function of the
:class:`~arena.formats.rounds.Rounds` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from arena.base.text import safe
from arena.formats.rounds import Match, Pairing, Rounds, StageState
from arena.formats.stages import STAGE_NAMES

__all__ = ["game_href", "rounds_html", "score_text"]

#: What ``encodeURIComponent`` leaves as it is: a link built here then reads
#: exactly as one the viewer builds for the same game.
_URI_COMPONENT_SAFE = "-_.!~*'()"


def game_href(game_id: str) -> str:
    """The viewer's address of a game at its start (``hashFor(id, 0)``)."""
    return f"#game={quote(game_id, safe=_URI_COMPONENT_SAFE)}&ply=0"


def rounds_html(rounds: Rounds) -> str:
    """Every stage paired so far: a knockout's bracket, a Swiss or
    round-robin's rounds; empty when no stage is."""
    staged = len(rounds.stages) > 1
    parts = [_knockout(state, staged) if state.stage.format == "knockout" else _points_stage(state, staged)
             for state in rounds.stages]
    return f'<div class="rounds-drawing">{"".join(parts)}</div>' if parts else ""


def _h(text: str) -> str:
    """Text as HTML, never markup (a long name is cut short by the stylesheet, whole in its title)."""
    return safe(text, "html")


def score_text(x: float) -> str:
    """A score as a chess table writes it: ``2½``, ``½``."""
    whole, half = divmod(round(2 * x), 2)
    return f"{whole or ''}½" if half else str(whole)


# ---- knockout -------------------------------------------------------------------


def _knockout(state: StageState, staged: bool) -> str:
    where = f"stage {state.number}, " if staged else ""
    top = f"the top {len(state.field)} of stage {state.number - 1}" if state.stage.top and staged else f"{len(state.field)} bots"
    title = f"Bracket ({where}knockout of {top})"
    rounds = max(state.total_rounds, len(state.matches))
    columns = []
    for index in range(rounds):
        matches: Sequence[Match | None] = state.matches[index] if index < len(state.matches) else \
            [None] * 2 ** (rounds - index - 1)  # not paired yet: empty boxes hold the bracket's shape
        number = state.pairings[index].round if index < len(state.pairings) else None
        columns.append(_ko_column(state, index, rounds, matches, number))
    champion = _champion(state, rounds)
    if champion:
        columns.append(champion)
    return (f'<h3>{_h(title)}</h3>'
            f'<div class="bracket" data-stage="{state.number}">{"".join(columns)}</div>')


def _ko_column(state: StageState, index: int, rounds: int, matches: Sequence[Match | None], number: int | None) -> str:
    name = state.round_name(index)
    # Each slot says which line joins it to the next round: the upper and the
    # lower match of a pair meet halfway; the final runs straight to the winner.
    last = index == rounds - 1
    slots = []
    for i, match in enumerate(matches):
        joins = ("straight" if _final_decided(state, rounds) else "") if last else ("upper" if i % 2 == 0 else "lower")
        box = _match_box(state, match, fed=index > 0)
        slots.append(f'<div class="ko-slot {joins}">{box}</div>')
    round_no = f' <span class="round-no">round {number}</span>' if number is not None else ""
    data = f' data-round="{number}"' if number is not None else ""
    return (f'<div class="ko-round"{data} data-name="{_h(name)}"><h4>{_h(name[:1].upper() + name[1:])}{round_no}</h4>'
            f'<div class="ko-slots">{"".join(slots)}</div></div>')


def _final_decided(state: StageState, rounds: int) -> bool:
    return len(state.matches) == rounds and len(state.matches[-1]) == 1 and state.matches[-1][0].winner is not None


def _champion(state: StageState, rounds: int) -> str:
    """The winner, in a column of its own after the final, once it is decided."""
    if not _final_decided(state, rounds):
        return ""
    match = state.matches[-1][0]
    winner = match.winner or ""
    seed = match.seeds[0] if winner == match.bots[0] else match.seeds[1]
    return ('<div class="ko-round champion"><h4>Winner</h4><div class="ko-slots"><div class="ko-slot">'
            f'<div class="match"><div class="bot winner"><span class="seed" title="seed {seed}">{seed}</span>'
            f'<span class="name" title="{_h(winner)}">{_h(winner)}</span></div></div>'
            '</div></div></div>')


def _match_box(state: StageState, match: Match | None, *, fed: bool) -> str:
    classes = "match" + (" fed" if fed else "")
    if match is None:
        return f'<div class="{classes} pending"><div class="bot">–</div><div class="bot">–</div><div class="how">to be paired</div></div>'
    a, b = match.bots
    if b is None:
        return (f'<div class="{classes} bye" data-decided="bye">{_bot_row(a, match.seeds[0], None, True)}'
                '<div class="how">bye: goes through without playing</div></div>')
    rows = "".join(_bot_row(bot, seed, score, None if match.winner is None else bot == match.winner)
                   for bot, seed, score in ((a, match.seeds[0], match.score[0]), (b, match.seeds[1], match.score[1])))
    decided = f' data-decided="{_h(match.decided_by)}"' if match.decided_by else ""
    return (f'<div class="{classes}{"" if match.winner else " open"}"{decided}>{rows}'
            f'<div class="how">{_h(_how(state, match))}</div>{_games_links(match.games, 2 * state.stage.games_per_match)}</div>')


def _bot_row(bot: str, seed: int | None, score: float | None, won: bool | None) -> str:
    mark = {True: " winner", False: " loser", None: ""}[won]
    shown = "" if score is None else f'<span class="score">{score_text(score)}</span>'
    return (f'<div class="bot{mark}"><span class="seed" title="seed {seed}">{seed}</span>'
            f'<span class="name" title="{_h(bot)}">{_h(bot)}</span>{shown}</div>')


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


def _games_links(games: Sequence[str], regular: int) -> str:
    """A numbered link per game; those after the first ``regular`` follow a
    "tie-break" mark, as they were added while the match was tied."""
    if not games:
        return ""
    links = []
    for k, game_id in enumerate(games, start=1):
        if k == regular + 1:
            links.append('<span class="tb">tie-break</span>')
        links.append(f'<a class="game" href="{_h(game_href(game_id))}" title="game {_h(game_id)}">{k}</a>')
    return f'<div class="games"><span class="label">games</span>{"".join(links)}</div>'


# ---- Swiss and round-robin --------------------------------------------------------


def _points_stage(state: StageState, staged: bool) -> str:
    where = f"stage {state.number}, " if staged else ""
    kind = STAGE_NAMES[state.stage.format]
    of = "" if state.stage.format == "adaptive" else f" of {state.total_rounds}"  # known once it stops
    title = f"Rounds ({where}{kind}, {len(state.pairings)}{of} paired)"
    cards = "".join(_round_card(state, pairing) for pairing in state.pairings)
    return f'<h3>{_h(title)}</h3><div class="swiss" data-stage="{state.number}">{cards}</div>'


def _round_card(state: StageState, pairing: Pairing) -> str:
    rows = []
    for a, b in pairing.pairs:
        result = state.results.get((pairing.round, a, b)) if b is not None else None
        if b is None or result is None or (not result.counted and not result.games):
            # A bot that left before the pairing was played: it plays nothing.
            rows.append(f'<tr class="left"><td class="name" colspan="3">{_h(a)} – {_h(b or "")}</td>'
                        '<td class="how">not played: a bot left</td></tr>')
            continue
        ahead = None if not result.games or result.score[0] == result.score[1] else result.score[0] > result.score[1]
        score = f"{score_text(result.score[0])}–{score_text(result.score[1])}" if result.games else "–"
        # Played, then a bot left: the games stay on show, out of the points.
        note = "" if result.counted else '<span class="how">not counted: a bot left</span>'
        rows.append(
            f'<tr class="pairing{"" if result.played or not result.counted else " open"}{"" if result.counted else " left"}">'
            f'{_name_cell(a, ahead)}<td class="score">{score}</td>{_name_cell(b, None if ahead is None else not ahead)}'
            f'<td>{_games_links(result.games, len(result.games))}{note}</td></tr>'
        )
    for bot in pairing.byes:
        how = "sat out: scores nothing" if state.stage.format == "adaptive" else f"bye: scores a {_h(state.stage.bye)}"
        rows.append(f'<tr class="bye">{_name_cell(bot, None)}<td class="how" colspan="3">{how}</td></tr>')
    return (f'<div class="swiss-round" data-round="{pairing.round}"><h4>Round {pairing.round}</h4>'
            f'<table class="pairings"><tbody>{"".join(rows)}</tbody></table></div>')


def _name_cell(bot: str, ahead: bool | None) -> str:
    mark = {True: " ahead", False: " behind", None: ""}[ahead]
    return f'<td class="name{mark}" title="{_h(bot)}">{_h(bot)}</td>'
