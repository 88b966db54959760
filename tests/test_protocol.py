import json
import random

import pytest

import engine
from arena.bot import protocol


@pytest.mark.parametrize("name", engine.GAMES)
def test_fast_turn_encoding_is_byte_for_byte_the_plain_one(name):
    game = engine.get_game(name)
    rng = random.Random(7)
    lines = protocol.TurnLines("r1-p2-g3")
    for seed in range(20):
        state, last = game.new_state(seed=seed), None
        while True:
            legal = game.legal_moves(state)
            clock = {"remaining_ms": rng.randrange(10**6), "opponent_ms": 5, "increment_ms": 100}
            clock_text = json.dumps(clock, separators=(",", ":"))
            fast = lines.full(game.ply(state), game.to_json_text(state), legal, last, clock_text)
            plain = protocol.encode(protocol.turn("r1-p2-g3", game.ply(state), game.to_json(state), legal, last, clock))
            assert fast == plain
            if not legal:
                break
            last = rng.choice(legal)
            state = game.apply(state, last)


@pytest.mark.parametrize("name", engine.GAMES)
def test_new_game_lines_are_byte_for_byte_the_plain_ones(name):
    game = engine.get_game(name)
    players = {game.colors[0]: "bot \"a\"", game.colors[1]: "bötchen"}
    control = {"initial_ms": 60000, "increment_ms": 100}
    for seed, opening in ((0, ()), (5, ("one", "two"))):
        state = game.new_state(seed=seed)
        for _ in range(seed):
            state = game.apply(state, game.legal_moves(state)[0])
        lines = protocol.new_game_lines("g\n7", name, players, control, game.to_json_text(state), seed, opening)
        assert lines == [
            protocol.encode(protocol.new_game("g\n7", name, color, players, control, game.to_json(state), seed, opening))
            for color in game.colors
        ]


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


# -- what a bot can make the arena store ----------------------------------------


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_decode_refuses_nesting_too_deep_to_read_in_one_line():
    line = '{"type":"move","move":"x","info":' + nested(100_000) + "}"
    with pytest.raises(protocol.ProtocolError, match=r"^JSON nested too deeply to read: '\{\"type\":\"move\""):
        protocol.decode(line, "move")


def test_decode_names_a_wrong_type_without_printing_it():
    with pytest.raises(protocol.ProtocolError, match=r"^expected a 'move' message, got type a list: "):
        protocol.decode('{"type":' + nested(900) + "}", "move")
    with pytest.raises(protocol.ProtocolError, match=r"^expected a 'move' message, got type 'xxxxx"):
        protocol.decode('{"type":"' + "x" * 100_000 + '"}', "move")


def test_decode_refuses_an_integer_too_long_to_convert():
    with pytest.raises(protocol.ProtocolError, match="^not JSON"):
        protocol.decode('{"type":"move","n":' + "1" * 5000 + "}", "move")


def test_bound_info_keeps_small_strict_objects_and_notes_why_others_are_dropped():
    assert protocol.bound_info(None) is None
    small = {"score": 0.5, "pv": ["a", "b"], "depth": [[[1]]]}
    assert protocol.bound_info(small) is small
    assert protocol.bound_info(json.loads('{"s": NaN}')) == {"dropped": "'info' holds NaN or Infinity, which JSON does not allow"}
    assert protocol.bound_info(json.loads('{"s": 1e999}')) == {"dropped": "'info' holds NaN or Infinity, which JSON does not allow"}
    assert protocol.bound_info({"s": "x" * 5000}) == {"dropped": "'info' has 5008 bytes, over the limit of 4096"}
    assert protocol.bound_info({"s": "\ud800"}) == {"dropped": "'info' holds text that is not valid Unicode (a lone surrogate)"}
    assert protocol.bound_info([1]) == {"dropped": "'info' must be a JSON object, not a list"}
    assert protocol.bound_info({"a": json.loads(nested(16))}) == {"dropped": "'info' is nested more than 16 levels deep"}
    fifteen = {"a": json.loads(nested(15))}
    assert protocol.bound_info(fifteen) is fifteen
    assert protocol.bound_info({"a": "[[[[[[[[[[[[[[[[[[[[["}) == {"a": "[[[[[[[[[[[[[[[[[[[[["}  # brackets in text are not depth


def test_ready_fields_keeps_name_version_author_as_short_text():
    message = {"type": "ready", "name": "n" * 500, "version": 2, "author": "me", "extra": json.loads(nested(900))}
    assert protocol.ready_fields(message) == {"name": "n" * 100 + "...", "author": "me"}
