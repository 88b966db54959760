"""A card's title on the live view: what the game is to a room watching
("Final · ann – bob, game 2", "Round 3 · ann – bob, game 1"), not its id."""

from __future__ import annotations

import re

from arena.formats.rounds import Rounds

__all__ = ["card_title"]

#: A game id as the schedule makes it (``arena.game.records.game_id``); "~" is in no bot's name.
_ID = re.compile(r"r(\d+)-(.+)~(.+)-g(\d+)")


def card_title(game_id: str, rounds: Rounds | None) -> str:
    """The title of game ``game_id``'s card; its id when the id is not the schedule's."""
    match = _ID.fullmatch(game_id)
    if match is None:
        return game_id
    return f"{_round_name(int(match[1]), rounds)} · {match[2]} – {match[3]}, game {match[4]}"


def _round_name(number: int, rounds: Rounds | None) -> str:
    """A knockout round by the bots it leaves ("Final", "Semi-final"), any other by its number."""
    for stage in rounds.stages if rounds is not None else ():
        if stage.stage.format != "knockout" or not stage.pairings:
            continue
        # By its place in the stage, not its pairing: a round's first games are under way before the
        # results the server last read hold its pairing.
        index = number - stage.pairings[0].round
        if 0 <= index < stage.total_rounds:
            name = stage.round_name(index).removesuffix("s")  # one match of the semi-finals: a semi-final
            return name[:1].upper() + name[1:]
    return f"Round {number}"
