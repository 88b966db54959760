"""A card's title on the live view: what the game is to a room watching
("Semi-final 1, game 3, tie-break pair 1 · ann 1–1 bob", "Round 3, board 2,
game 1 · ann – bob"), not its id, what tells one game from another first (a
big screen cuts a long title's end); and which knockout round it belongs
to, for the big screen to show those first."""

from __future__ import annotations

import re

from arena.formats.rounds import Match, Rounds, StageState
from arena.results.report.bracket import score_text

__all__ = ["card_title", "knockout_depth"]

#: A game id as the schedule makes it (``arena.game.records.game_id``); "~" is in no bot's name.
_ID = re.compile(r"r(\d+)-(.+)~(.+)-g(\d+)")


def card_title(game_id: str, rounds: Rounds | None) -> str:
    """The title of game ``game_id``'s card; its id when the id is not the schedule's."""
    match = _ID.fullmatch(game_id)
    if match is None:
        return game_id
    number, a, b, game = int(match[1]), match[2], match[3], int(match[4])
    knockout = _knockout_round(number, rounds)
    if knockout is None:
        board = _board(number, a, b, rounds)
        return f"Round {number}{f', board {board}' if board else ''}, game {game} · {a} – {b}"
    index, name, stage = knockout
    matches = stage.matches[index] if index < len(stage.matches) else []
    found = next((at for at, m in enumerate(matches) if set(m.bots) == {a, b}), None)
    numbered = f"{name} {found + 1}" if found is not None and len(matches) > 1 else name
    regular = 2 * stage.stage.games_per_match
    tiebreak = f", tie-break pair {(game - regular + 1) // 2}" if game > regular else ""
    return f"{numbered}, game {game}{tiebreak} · {_score(matches[found]) if found is not None else f'{a} – {b}'}"


def _score(match: Match) -> str:
    """The match's bots and its score so far, in the bracket's order ("ann 1–1 bob"; "ann – bob" before its first game)."""
    a, b = match.bots
    if not match.games:
        return f"{a} – {b}"
    return f"{a} {score_text(match.score[0])}–{score_text(match.score[1])} {b}"


def _board(number: int, a: str, b: str, rounds: Rounds | None) -> int | None:
    """The board of ``a`` and ``b`` in round ``number`` of a Swiss (its place in the pairing), None when not paired."""
    for stage in rounds.stages if rounds is not None else ():
        for pairing in stage.pairings:
            if pairing.round == number:
                return next((at for at, pair in enumerate(pairing.pairs, start=1) if set(pair) == {a, b}), None)
    return None


def knockout_depth(game_id: str, rounds: Rounds | None) -> int:
    """How far into a knockout game ``game_id`` is: 1 for its first round, more
    for each later one (the final the most); 0 outside a knockout."""
    match = _ID.fullmatch(game_id)
    knockout = _knockout_round(int(match[1]), rounds) if match is not None else None
    return knockout[0] + 1 if knockout is not None else 0


def _knockout_round(number: int, rounds: Rounds | None) -> tuple[int, str, StageState] | None:
    """Round ``number``'s place in its knockout stage, its name there ("Final", "Semi-final") and the stage;
    None outside one."""
    first = 1
    for stage in rounds.stages if rounds is not None else ():
        # By its place in the stage, not its pairing: a round's first games are under way before the
        # results the server last read hold its pairing.  A stage not paired yet (its state is there once
        # the stage before is complete) starts after the last round paired before it.
        first = stage.pairings[0].round if stage.pairings else first
        index = number - first
        if stage.stage.format == "knockout" and 0 <= index < stage.total_rounds:
            name = stage.round_name(index).removesuffix("s")  # one match of the semi-finals: a semi-final
            return index, name[:1].upper() + name[1:], stage
        first = stage.pairings[-1].round + 1 if stage.pairings else first
    return None
