"""arena.game.positions: a record's positions, recomputed with the engine."""

from __future__ import annotations

import pytest

import engine
from arena.game.positions import positions, start_state
from arena.game.records import MoveRecord
from played_games import played_games


@pytest.mark.parametrize("name", engine.GAMES)
def test_positions_follow_the_moves_from_the_referees_start(name):
    game = engine.get_game(name)
    for record in played_games(name, ["a", "b"], 4, seed=3):
        states = positions(record)
        assert states[0] == game.new_state(seed=record.seed, opening=record.opening) == start_state(record)
        assert len(states) == len(record.moves) + 1
        for before, move, after in zip(states, record.moves, states[1:]):
            assert game.apply(before, move.move) == after
        outcome = game.outcome(states[-1])
        assert outcome is not None and outcome.reason == record.reason


def test_a_move_the_engine_refuses_names_the_game_and_the_move():
    record = played_games("oxono", ["a", "b"], 1, seed=3)[0]
    record.moves[2] = MoveRecord("Xa1 a1", 1.0)
    with pytest.raises(engine.IllegalMove, match=r"game r1-g0, move 3 \('Xa1 a1'\)"):
        positions(record)
