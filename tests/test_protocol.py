import json
import random

import pytest

import engine
from arena import protocol


@pytest.mark.parametrize("name", engine.GAMES)
def test_fast_turn_encoding_is_byte_for_byte_the_plain_one(name):
    game = engine.get_game(name)
    rng = random.Random(7)
    for seed in range(20):
        state, last = game.new_state(seed=seed), None
        while True:
            legal = game.legal_moves(state)
            clock = {"remaining_ms": rng.randrange(10**6), "opponent_ms": 5, "increment_ms": 100}
            fast = protocol.encode_turn("r1-p2-g3", game.ply(state), game.to_json_text(state), legal, last, clock)
            plain = protocol.encode(protocol.turn("r1-p2-g3", game.ply(state), game.to_json(state), legal, last, clock))
            assert fast == plain
            if not legal:
                break
            last = rng.choice(legal)
            state = game.apply(state, last)


@pytest.mark.parametrize("name", engine.GAMES)
def test_state_text_is_the_json_of_the_state_object(name):
    game = engine.get_game(name)
    state = game.new_state(seed=3)
    for _ in range(10):
        assert json.loads(game.to_json_text(state)) == game.to_json(state)
        state = game.apply(state, game.legal_moves(state)[-1])


def test_encode_is_one_compact_utf8_line():
    line = protocol.encode({"type": "ready", "name": "Bötchen", "x": [1, 2]})
    assert line == '{"type":"ready","name":"Bötchen","x":[1,2]}\n'.encode()
    assert line.count(b"\n") == 1


@pytest.mark.parametrize(
    "line, words",
    [
        ("hello", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"type": "ready"}', "expected a 'move' message"),
        ('{"move": "Xc5 c6"}', "got type None"),
    ],
)
def test_decode_refuses_what_is_not_the_expected_message(line, words):
    with pytest.raises(protocol.ProtocolError, match=words):
        protocol.decode(line, "move")


def test_decode_passes_error_messages_through_and_keeps_unknown_fields():
    assert protocol.decode('{"type":"error","message":"no"}', "move")["message"] == "no"
    message = protocol.decode('{"type":"move","move":"Xc5 c6","future":1}', "move")
    assert message["move"] == "Xc5 c6" and message["future"] == 1


def test_long_garbage_is_quoted_short_in_the_error():
    with pytest.raises(protocol.ProtocolError) as info:
        protocol.decode("x" * 10_000, "move")
    assert len(str(info.value)) < 200


def test_new_game_and_game_over_shapes():
    message = protocol.new_game("g1", "yoxii", "red", {"white": "a", "red": "b"}, {"per_move_ms": 500}, {}, 42)
    assert message["type"] == "new_game" and message["you"] == "red" and message["seed"] == 42
    assert message["opening_moves"] == []
    over = protocol.game_over("g1", None, "blocked", ["d5 3e6"], {"white": 9, "red": 9}, ("d3 1d2",))
    assert over == {"type": "game_over", "game_id": "g1", "winner": None, "reason": "blocked",
                    "moves": ["d5 3e6"], "opening_moves": ["d3 1d2"], "scores": {"white": 9, "red": 9}}
    assert "scores" not in protocol.game_over("g1", "pink", "alignment", [], None)
