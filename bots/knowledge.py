"""One interface over the per-game knowledge (``oxono_eval``, ``yoxii_eval``)
that the search bots use: immediate wins and a static evaluation."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import engine
from bots import oxono_eval, yoxii_eval

__all__ = ["Knowledge", "for_game", "WIN"]

WIN = 100_000
assert oxono_eval.WIN == yoxii_eval.WIN == WIN


@dataclass(frozen=True)
class Knowledge:
    #: The moves that win at once for the player to move.
    winning_moves: Callable[[Any], list[str]]
    has_winning_move: Callable[[Any], bool]
    #: The position for the player to move, well inside (-WIN, WIN).
    evaluate: Callable[[Any], int]
    #: A playout to the end on the game's bitboards (the winning seat or None),
    #: when the game has one faster than the generic one in ``bots.mcts``.
    playout: Callable[[Any, random.Random], int | None] | None = None


def for_game(game: engine.Game[Any]) -> Knowledge:
    if game.name == "oxono":
        return Knowledge(oxono_eval.winning_moves, oxono_eval.has_winning_move, oxono_eval.evaluate)
    if game.name == "yoxii":
        return Knowledge(
            lambda state: yoxii_eval.winning_moves(state, game),
            lambda state: yoxii_eval.has_winning_move(state, game),
            yoxii_eval.evaluate,
            yoxii_eval.playout,
        )
    raise ValueError(f"no search knowledge for {game.name!r}")
