"""arena.results.show: a recorded game as terminal frames."""

from __future__ import annotations

import pytest

import engine
from arena.game.positions import positions
from arena.game.records import MoveRecord
from arena.results.show import find_game, frames, game_heading, result_line
from played_games import played_games


@pytest.mark.parametrize("name", engine.GAMES)
@pytest.mark.parametrize("index", [0, 1], ids=["start", "after-an-opening"])
def test_a_frame_per_move_with_the_engines_board(name, index):
    game = engine.get_game(name)
    record = played_games(name, ["ann", "bob"], 2, seed=2, opening_plies=3)[index]
    shown = frames(record)
    states = positions(record)
    assert len(shown) == len(record.moves) + 1
    opening = f" after the opening's moves {', '.join(record.opening_moves)}" if index else ""
    assert shown[0].startswith(f"start position{opening}\n")
    for ply, (frame, state) in enumerate(zip(shown, states)):
        assert game.render(state) in frame
        if ply:
            move = record.moves[ply - 1]
            # After an opening of 3 moves the second colour makes the bots' first move.
            color = game.colors[(ply - 1 + len(record.opening_moves)) % 2]
            assert frame.splitlines()[0] == (
                f"move {ply}: {color} ({record.players[color]}) played {move.move} in {move.ms:.1f} ms"
            )
    assert shown[-1].endswith(result_line(record))


def test_info_is_shown_escaped_and_cut():
    record = played_games("oxono", ["ann", "bob"], 1, seed=2)[0]
    record.moves[0] = MoveRecord(record.moves[0].move, 3.25, {"note": "\x1b[2J\x9b" + "y" * 500})
    line = frames(record)[1].splitlines()[1]
    assert line.startswith('  info: {"note": "\\u001b[2J\\x9byyy')
    assert "\x1b" not in line and "\x9b" not in line
    assert line.endswith("…") and len(line) == len("  info: ") + 200


def test_result_lines():
    oxono, forfeit = played_games("oxono", ["ann", "bob"], 2, seed=4, forfeit_every=2)
    assert result_line(oxono) == f"result: {oxono.winner} ({oxono.players[oxono.winner]}) wins by alignment"
    assert result_line(forfeit) == (
        f"result: {forfeit.winner} ({forfeit.players[forfeit.winner]}) wins; {forfeit.forfeit_by} "
        f"({forfeit.players[forfeit.forfeit_by]}) forfeited by timeout: {forfeit.detail}"
    )
    yoxii = played_games("yoxii", ["ann", "bob"], 1, seed=4)[0]
    assert f"(white {yoxii.scores['white']}, red {yoxii.scores['red']})" in result_line(yoxii)
    assert game_heading(yoxii) == "yoxii game r1-g0: ann (white) vs bob (red); round 1, opening 0"


def test_find_game_suggests_close_ids():
    records = played_games("oxono", ["ann", "bob"], 3)
    assert find_game(records, "r1-g1") is records[1]
    with pytest.raises(LookupError, match=r"no game 'r1-g9' in these results; did you mean r1-g"):
        find_game(records, "r1-g9")
    with pytest.raises(LookupError, match=r"no game 'zzz' in these results \(3 games, e.g. r1-g0, r1-g1, r2-g2\)"):
        find_game(records, "zzz")
