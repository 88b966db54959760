"""Which games in progress the big screen shows first when it cannot show
them all: knockout games (the later the round, the sooner), then close
games (the bots' own scores, from their ``info``, nearest to even)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from arena.formats.rounds import Rounds
from arena.live.titles import knockout_depth

__all__ = ["card_interest"]


def card_interest(game_id: str, rounds: Rounds | None, infos: Sequence[str | None]) -> float:
    """Higher is shown first: twice the knockout depth (a knockout game
    outranks any other), plus how close the game is, between 0 (no score, or
    a lopsided one) and 1 (even)."""
    scores = [score for score in map(_score, infos) if score is not None]
    closeness = 1 / (1 + sum(map(abs, scores)) / len(scores)) if scores else 0.0
    return 2 * knockout_depth(game_id, rounds) + closeness


def _score(info: str | None) -> float | None:
    """The ``score`` of an ``info`` as the viewer shows it (JSON text, perhaps cut short: then none)."""
    try:
        score = json.loads(info)["score"] if info is not None else None
    except (ValueError, TypeError, KeyError):
        return None
    ok = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
    return float(score) if ok else None
