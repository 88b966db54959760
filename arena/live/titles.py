"""A card's title on the live view: what the game is to a room watching
("Final · ann – bob, game 2", "Round 3 · ann – bob, game 1"), not its id;
and which knockout round it belongs to, for the big screen to show those first."""

from __future__ import annotations

import re

from arena.formats.rounds import Rounds

__all__ = ["card_title", "knockout_depth"]

#: A game id as the schedule makes it (``arena.game.records.game_id``); "~" is in no bot's name.
_ID = re.compile(r"r(\d+)-(.+)~(.+)-g(\d+)")


def card_title(game_id: str, rounds: Rounds | None) -> str:
    """The title of game ``game_id``'s card; its id when the id is not the schedule's."""
    match = _ID.fullmatch(game_id)
    if match is None:
        return game_id
    knockout = _knockout_round(int(match[1]), rounds)
    name = knockout[1] if knockout is not None else f"Round {match[1]}"
    return f"{name} · {match[2]} – {match[3]}, game {match[4]}"


def knockout_depth(game_id: str, rounds: Rounds | None) -> int:
    """How far into a knockout game ``game_id`` is: 1 for its first round, more
    for each later one (the final the most); 0 outside a knockout."""
    match = _ID.fullmatch(game_id)
    knockout = _knockout_round(int(match[1]), rounds) if match is not None else None
    return knockout[0] + 1 if knockout is not None else 0


def _knockout_round(number: int, rounds: Rounds | None) -> tuple[int, str] | None:
    """Round ``number``'s place in its knockout stage and its name there ("Final", "Semi-final"); None outside one."""
    first = 1
    for stage in rounds.stages if rounds is not None else ():
        # By its place in the stage, not its pairing: a round's first games are under way before the
        # results the server last read hold its pairing.  A stage not paired yet (its state is there once
        # the stage before is complete) starts after the last round paired before it.
        first = stage.pairings[0].round if stage.pairings else first
        index = number - first
        if stage.stage.format == "knockout" and 0 <= index < stage.total_rounds:
            name = stage.round_name(index).removesuffix("s")  # one match of the semi-finals: a semi-final
            return index, name[:1].upper() + name[1:]
        first = stage.pairings[-1].round + 1 if stage.pairings else first
    return None
