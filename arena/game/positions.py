"""The positions of a recorded game, ply by ply, recomputed with the engine.

A :class:`~arena.game.records.GameRecord` holds the moves, not the positions: the
start position follows from the game's seed and opening (its start position and
the opening suite's moves) exactly as the referee built it, and every later one
from applying the bots' moves.  The terminal replay
(:mod:`arena.results.show`) and the HTML report (:mod:`arena.results.report`) both start here.
"""

from __future__ import annotations

from typing import Any

import engine
from arena.game.openings import play_opening
from arena.game.records import GameRecord

__all__ = ["start_state", "positions"]


def start_state(record: GameRecord) -> Any:
    """The engine state the bots began from, as the referee built it: the start
    position ``opening`` after the opening suite's ``opening_moves``."""
    return play_opening(engine.get_game(record.game), record.opening, record.opening_moves)


def positions(record: GameRecord) -> list[Any]:
    """The engine state before the first move and after each move: ``len(moves) + 1`` states.

    Raises :class:`engine.IllegalMove` naming the ply when a stored move does not
    apply (a record edited by hand, or written by another version of the rules)."""
    game = engine.get_game(record.game)
    state = start_state(record)
    states = [state]
    for ply, move in enumerate(record.moves):
        try:
            state = game.apply(state, move.move)
        except engine.IllegalMove as exc:
            raise engine.IllegalMove(f"game {record.game_id}, move {ply + 1} ({move.move!r}): {exc}") from None
        states.append(state)
    return states
