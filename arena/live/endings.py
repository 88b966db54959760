"""The games that just ended, held on the live view for a few seconds: a
room watching the screen sees how each game ended, not its card vanishing.

A game's live file goes when the game ends; its record reaches the results
a moment later (the server reads them every few seconds).  In between, the
game is shown as it was last seen, ``ending``.  Once recorded, its card
shows the record's final position (the moves no live file held included:
fast bots play several between two writes) and its result, ``ended`` at the
time the server saw the record, for :data:`HOLD_S` seconds.  A game recorded
that was never seen in progress is held all the same.  A game that left
the live files unrecorded and comes back (its run stopped during it, the
next plays it again from its start) is marked ``again``: a room sees a game
go back to move 0 and is told why.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

import engine
from arena.game.positions import positions
from arena.game.records import GameRecord
from arena.results.live_feed import LiveGame, board_cells, infos_by_seat, last_infos, touched
from arena.results.show import result_text

__all__ = ["HOLD_S", "MOST_HELD", "Endings"]

#: Seconds a finished game stays on its card (the page frees it sooner when it needs the slot).
HOLD_S = 10.0
#: Finished games held at once: as many as the page's cards.
MOST_HELD = 16


class Endings:
    """What the live view shows of the games in progress and of those that just ended."""

    def __init__(self, hold_s: float = HOLD_S) -> None:
        self.hold_s = hold_s
        #: The games recorded at the last look; None before the first (whose records are old news).
        self._recorded: Set[str] | None = None
        self._playing: dict[str, LiveGame] = {}
        #: Out of the live files, not yet recorded: since when, and as last seen.
        self._ending: dict[str, tuple[float, LiveGame]] = {}
        self._held: dict[str, dict[str, Any]] = {}
        #: Games that left the live files and were never recorded: cut off by a run that stopped.
        self._cut: set[str] = set()

    def games(self, live: Iterable[LiveGame], records: Iterable[GameRecord], recorded: Set[str],
              now: float) -> list[dict[str, Any]]:
        """The cards at ``now`` (seconds since the epoch): the games in
        progress (``live``), those ending, and those held, as the page's
        script takes them.  ``recorded``: the ids of ``records``."""
        playing = {game.game_id: game for game in live}
        for game_id, game in self._playing.items():
            if game_id not in playing:
                self._ending.setdefault(game_id, (now, game))
        # Back in the live files, unrecorded: played again (one card, not the old one ending beside it).
        self._cut |= playing.keys() & self._ending.keys()
        self._ending = {key: value for key, value in self._ending.items() if key not in playing}
        self._playing = playing
        if self._recorded is not None and len(recorded) != len(self._recorded):
            new = [record for record in records if record.game_id not in self._recorded]
            for record in sorted(new, key=lambda r: r.ended_at)[-MOST_HELD:]:
                self._hold(record, now)
        self._recorded = recorded
        self._cut |= {key for key, (since, _) in self._ending.items() if key not in recorded and since + self.hold_s <= now}
        self._cut -= recorded
        self._ending = {key: (since, game) for key, (since, game) in self._ending.items()
                        if key not in recorded and since + self.hold_s > now}
        kept = sorted((card["ended"], key) for key, card in self._held.items() if card["ended"] + self.hold_s > now)
        self._held = {key: self._held[key] for _, key in kept[-MOST_HELD:]}
        return ([{**game.to_json(), **({"again": True} if key in self._cut else {})} for key, game in playing.items()]
                + [{**game.to_json(), "ending": True} for _, game in self._ending.values()]
                + list(self._held.values()))

    def _hold(self, record: GameRecord, now: float) -> None:
        try:
            replayed = positions(record)
        except engine.IllegalMove:  # a record edited by hand: no board to show
            return
        final = replayed[-1]
        ending = self._ending.get(record.game_id)
        seen = ending[1] if ending is not None else self._playing.get(record.game_id)
        game = engine.get_game(record.game)
        colors = list(record.players)
        cells = board_cells(game, final)
        seats = [game.to_move(position) for position in replayed[:-1]]
        self._held[record.game_id] = {
            "id": record.game_id, "game": record.game, "round": record.round, "players": list(record.players.values()),
            "moves": [move.move for move in record.moves], "cells": list(cells),
            "last": list(touched(board_cells(game, replayed[-2]), cells)) if record.moves else [],
            "infos": list(infos_by_seat(last_infos(record.moves), seats)),
            "to_move": game.to_move(final), "per_move": seen.per_move if seen is not None else False,
            # The clocks as last seen: the record keeps each move's time, not what was left.
            "clock_ms": list(seen.clock_ms) if seen is not None else None,
            "winner": colors.index(record.winner) if record.winner is not None else None,
            "result": result_text(record), "ended": now,
        }
