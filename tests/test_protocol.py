import json
import random
import re

import pytest
from hypothesis import given, settings, strategies as st

import engine
from arena.bot import protocol
from builders import ROOT, spec


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
    odds = {"per_move_ms": 500}  # the second bot's own clock: each bot is told its own
    for seed, opening in ((0, ()), (5, ("one", "two"))):
        state = game.new_state(seed=seed)
        for _ in range(seed):
            state = game.apply(state, game.legal_moves(state)[0])
        for controls in ([control, control], [control, odds]):
            lines = protocol.new_game_lines("g\n7", name, players, controls, game.to_json_text(state), seed, opening)
            assert lines == [
                protocol.encode(protocol.new_game("g\n7", name, color, players, own, game.to_json(state), seed, opening))
                for color, own in zip(game.colors, controls)
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


_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats()
            | st.text(st.characters(codec="ascii"), max_size=800) | st.text(max_size=40))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=30), _SCALARS | st.lists(_SCALARS, max_size=40), max_size=12))
def test_info_taken_without_being_written_out_is_what_the_exact_measure_keeps(info):
    # (most info is kept on a bound worked out without writing it: never one the measure drops)
    if protocol._surely_within_bounds(info):
        assert len(protocol.strict_dumps(info).encode()) <= protocol.MAX_INFO_BYTES
    assert (protocol.bound_info(info) is info) == _kept_when_written_out(info)


def _kept_when_written_out(info) -> bool:
    try:
        return len(protocol.strict_dumps(info).encode()) <= protocol.MAX_INFO_BYTES
    except (ValueError, UnicodeEncodeError):
        return False


def test_ready_fields_keeps_name_version_author_as_short_text():
    message = {"type": "ready", "name": "n" * 500, "version": 2, "author": "me", "extra": json.loads(nested(900))}
    assert protocol.ready_fields(message) == {"name": "n" * 100 + "...", "author": "me"}


# -- what docs/protocol.md guarantees about the arena's lines ("Reading the
# messages without a JSON library"), asserted on lines a real bot received.

RECORDER = """\
import json, sys
sys.path.insert(0, {root!r})
import engine
record = open(sys.argv[1], "w", encoding="utf-8", newline="")
compact = sys.argv[2] == "compact"
rules = state = None
for line in sys.stdin:
    record.write(line)
    record.flush()
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        rules = engine.get_game(message["game"])
        print(json.dumps({{"type": "ready", "compact_turns": compact}}), flush=True)
    elif kind == "new_game":
        state = rules.from_json(message["state"])
    elif kind == "turn":
        if message["last_move"] is not None:
            state = rules.apply(state, message["last_move"])
        move = rules.legal_moves(state)[0]
        state = rules.apply(state, move)
        print(json.dumps({{"type": "move", "move": move}}), flush=True)
    elif kind == "quit":
        break
"""

#: The fields of each message, in the order the arena writes them.
FIELD_ORDER = {
    "hello": ["type", "protocol", "game", "name", "options"],
    "new_game": ["type", "game_id", "game", "you", "players", "time_control", "state", "seed", "opening_moves"],
    "turn": ["type", "game_id", "ply", "state", "legal_moves", "last_move", "clock"],
    "compact turn": ["type", "game_id", "ply", "last_move", "clock"],
    "game_over": ["type", "game_id", "winner", "reason", "moves", "opening_moves"],
    "game_over with scores": ["type", "game_id", "winner", "reason", "moves", "opening_moves", "scores"],
    "quit": ["type"],
}
STATE_ORDER = {"oxono": ["board", "to_move", "ply", "totems", "reserve"],
               "yoxii": ["board", "to_move", "ply", "totem", "reserve"]}
MOVE = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)?")


@pytest.mark.parametrize("name", engine.GAMES)
def test_the_lines_the_arena_sends_are_as_the_protocol_page_says(name, tmp_path):
    from arena.run.config import parse_config
    from arena.run.pool import BotPool

    bot = tmp_path / "recorder.py"
    bot.write_text(RECORDER.format(root=str(ROOT)))
    config = parse_config(f"""\
name: wire
game: {name}
time_control: 5+0.1
openings: {{plies: 2, count: 1}}
bots:
  - {{name: full, cmd: python {bot} {tmp_path / 'full.jsonl'} full, options: {{note: "bö \\\\ \\"q\\"\\n\\t€", depth: 3, w: 0.5}}}}
  - {{name: compact, cmd: python {bot} {tmp_path / 'compact.jsonl'} compact}}
""")
    pool = BotPool(config, None, "t")
    try:
        opening = config.competition.openings[0]
        for index, players in enumerate((("full", "compact"), ("compact", "full"))):
            pool.play(spec(index, players, game_id=f"g\"{index}é", game=name, opening=opening.start,
                           opening_moves=opening.moves))
    finally:
        pool.close()
    seen: set[str] = set()
    for who in ("full", "compact"):
        raw = (tmp_path / f"{who}.jsonl").read_bytes()
        assert raw.endswith(b"\n")
        for line in raw.decode("utf-8").split("\n")[:-1]:  # one object per line, nothing between
            message = json.loads(line)
            # compact: no space between tokens; non-ASCII as it is, only JSON's own escapes (\" \\ \n \t ...)
            assert line == json.dumps(message, separators=(",", ":"), ensure_ascii=False)
            kind = message["type"]
            if kind == "turn" and who == "compact":
                kind = "compact turn"
            if kind == "game_over" and "scores" in message:
                kind = "game_over with scores"
            assert list(message) == FIELD_ORDER[kind], line
            for i, key in enumerate(message):  # the first '"key":' in the line is the top-level field
                before = json.dumps(dict(list(message.items())[:i]), separators=(",", ":"), ensure_ascii=False)[:-1]
                assert line.find(f'"{key}":') == len(before) + (i > 0), (key, line)
            if "state" in message:
                assert list(message["state"]) == STATE_ORDER[name]
            if "clock" in message:
                assert list(message["clock"]) == ["remaining_ms", "opponent_ms", "increment_ms"]
            if "time_control" in message:
                assert list(message["time_control"]) == ["initial_ms", "increment_ms"]
            assert line.startswith('{"type":"' + message["type"] + '",')  or kind == "quit"
            for move in message.get("legal_moves", []) + message.get("moves", []) + [message.get("last_move") or "a1"]:
                assert MOVE.fullmatch(move), move
            seen.add(kind)
    assert line == '{"type":"quit"}'
    assert '"options":{"note":"bö \\\\ \\"q\\"\\n\\t€","depth":3,"w":0.5}' in (tmp_path / "full.jsonl").read_text()
    assert seen == set(FIELD_ORDER) - ({"game_over"} if name == "yoxii" else {"game_over with scores"})
