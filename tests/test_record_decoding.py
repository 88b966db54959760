"""GameRecord.from_bytes, the store's reader of a line of games.jsonl
(msgspec decodes it into the record): it reads every line as
``from_json(json.loads(line))`` does, the same record or the same one-line
reason, for valid records, forged ones, and lines only Python's JSON reads."""

from __future__ import annotations

import dataclasses

import base64
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine
from arena.bot.forfeits import MAX_DETAIL_CHARS
from arena.bot.protocol import MAX_INFO_BYTES
from arena.game import records as records_module
from arena.game.records import GameRecord, MAX_ROUND, REASONS, RULE_REASONS

PROPERTY = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

#: A valid record, to vary one field at a time.
VALID: dict[str, Any] = {
    "game_id": "r1-a~b-g1", "game": "oxono", "players": {"pink": "a", "black": "b"}, "seed": 5, "opening": 1,
    "time_control": {"initial_ms": 5000, "increment_ms": 100},
    "moves": [{"move": "Xc5 c6", "ms": 1.5, "info": {"depth": 2, "pv": ["Xc5 c6"]}}, {"move": "Od4 d3", "ms": 2}],
    "winner": "black", "reason": "timeout", "scores": None, "forfeit_by": "pink", "detail": "no move",
    "started_at": "", "ended_at": "", "index": 0, "round": 1, "opening_moves": [], "pair": 0,
    "versions": {"pink": "1", "black": "2"}, "time_controls": None,
    "played_on": {"host": "h", "worker": 1, "nice": 0},
}


def old(line: bytes) -> GameRecord:
    """How the store read a line before msgspec: Python's parser, then every check in Python."""
    return GameRecord.from_json(json.loads(line))


def outcome(reader, line: bytes) -> tuple[Any, ...]:
    """What ``reader`` makes of ``line``: the record with what equality leaves out, or the reason it gives."""
    try:
        record = reader(line)
    except ValueError as exc:
        return ("refused", str(exc))
    except (RecursionError, MemoryError) as exc:
        return (type(exc).__name__,)
    return ("read", record, record.played_on, record._line, [type(m.ms) for m in record.moves])


def line_of(data: Any, **dumps: Any) -> bytes:
    return json.dumps(data, **dumps).encode("utf-8", "surrogatepass")


# -- lines of valid records, and of records wrong in one field --------------------------

TEXT = st.text(max_size=12) | st.sampled_from(["a", "bot-1", "é", "\x1b[2J", "x" * 101, ""])
NUMBERS = (st.integers(-3, 2**64) | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([0, -0.0, 0.5, 1e308, 2**63, 2**31 - 1]))
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                           max_leaves=12)


def sometimes(good: st.SearchStrategy, bad: st.SearchStrategy) -> st.SearchStrategy:
    """``good`` nine times in ten, else ``bad``."""
    return st.integers(0, 9).flatmap(lambda k: bad if k == 0 else good)


#: The fields every drawn record holds (the others: :func:`optional_fields`).
ALWAYS_DRAWN = ("game_id", "game", "players", "seed", "opening", "time_control", "moves", "winner", "reason",
                "forfeit_by", "detail")


def optional_fields(colors: list[str]) -> dict[str, Any]:
    """The fields a drawn record holds now and then, each with what it draws."""
    return {
        "scores": st.none() | st.just(dict(zip(colors, (3, 5)))), "started_at": st.just("2026-01-01T00:00:00.000+00:00"),
        "index": st.integers(0, 2**31 - 1), "round": st.integers(0, MAX_ROUND - 1), "opening_moves": st.just(["a1"]),
        "pair": st.none() | st.integers(0, 10), "versions": st.just(dict(zip(colors, ("1", "2")))),
        "time_controls": st.just(dict.fromkeys(colors, {"per_move_ms": 9})),
        "played_on": st.sampled_from([{"host": "h", "node_id": "n", "actor": 2, "nice": 15},
                                      {"host": "h", "actor": 1, "nice": 0, "speed": 0.8}]),
        "time_scale": st.floats(0.01, 100), "network_margin_ms": st.just({colors[0]: 200}),
        "ended_at": st.just("2026-01-01T00:00:01.000+00:00"),
    }


@st.composite
def records(draw) -> dict[str, Any]:
    """A record of either game that is mostly valid, some field now and then not."""
    name = draw(st.sampled_from(sorted(engine.GAMES)))
    game = engine.get_game(name)
    colors = list(game.colors)
    moves = draw(st.lists(st.fixed_dictionaries(
        {"move": sometimes(st.sampled_from(["Xc5 c6", "d5 3e6", "a1"]), TEXT),
         "ms": sometimes(st.integers(0, 10**6) | st.floats(0, 1e9), NUMBERS)},
        optional={"info": sometimes(st.none() | st.dictionaries(st.sampled_from(["score", "pv", "é"]), SCALARS, max_size=3),
                                    JSON_VALUES)},
    ), max_size=5))
    forfeit = draw(st.booleans())
    winner = draw(st.sampled_from(colors)) if forfeit else draw(st.sampled_from([None, *colors]))
    names = st.lists(st.sampled_from(["a", "b", "c"]), min_size=2, max_size=2).map(lambda two: dict(zip(colors, two)))
    record = {
        "game_id": draw(sometimes(st.sampled_from(["r1-a~b-g1", "g7"]), TEXT)),
        "game": name,
        "players": draw(sometimes(names, JSON_VALUES)),
        "seed": draw(sometimes(st.integers(0, 2**63 - 1), NUMBERS)),
        "opening": draw(sometimes(st.integers(0, game.openings - 1), NUMBERS)),
        "time_control": draw(sometimes(st.sampled_from([{"initial_ms": 5000, "increment_ms": 100}, {"per_move_ms": 50}]),
                                       JSON_VALUES)),
        "moves": moves,
        "winner": winner,
        "reason": draw(sometimes(st.sampled_from(RULE_REASONS if not forfeit else REASONS[len(RULE_REASONS):]), TEXT)),
        "forfeit_by": (colors[1] if winner == colors[0] else colors[0]) if forfeit else None,
        "detail": draw(sometimes(st.none() | st.text(max_size=30), JSON_VALUES)),
    }
    assert tuple(record) == ALWAYS_DRAWN
    for key, value in optional_fields(colors).items():
        if draw(st.booleans()):
            record[key] = draw(sometimes(value, JSON_VALUES))
    if draw(st.integers(0, 9)) == 0:
        del record[draw(st.sampled_from(sorted(record)))]
    return record


@st.composite
def lines(draw) -> bytes:
    """A record's line, written as the arena writes it or as a hand or a forger might."""
    record = draw(records())
    if draw(st.integers(0, 4)) == 0:  # a key no record has, holding what strict JSON does not
        record[draw(st.sampled_from(["note", "_line", "moves_"]))] = draw(JSON_VALUES)
    text = line_of(record, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    shape = draw(st.integers(0, 9))
    if shape == 0:  # a key given twice: the last one counts
        key = draw(st.sampled_from(sorted(record)))
        text = b"{" + line_of(key) + b":" + line_of(draw(JSON_VALUES)) + b"," + text[1:]
    elif shape == 1:
        text = draw(st.sampled_from([b"\xef\xbb\xbf", b" ", b"\t"])) + text + draw(st.sampled_from([b"", b" ", b"\r"]))
    return text


@PROPERTY
@given(lines())
def test_from_bytes_reads_every_line_as_from_json_does(line):
    assert outcome(GameRecord.from_bytes, line) == outcome(old, line)


def test_the_lines_drawn_can_hold_every_field_of_a_record():
    # A field the drawn lines never hold is one the plain check is never tried on (time_scale was).
    drawn = set(ALWAYS_DRAWN) | set(optional_fields(["pink", "black"]))
    assert drawn == {f.name for f in dataclasses.fields(GameRecord) if f.init and not f.name.startswith("_")}


@PROPERTY
@given(lines())
def test_the_plain_check_passes_no_record_every_check_refuses(line):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GameRecord, "_plainly_valid", lambda self: False)
        checked = outcome(GameRecord.from_bytes, line)
    assert outcome(GameRecord.from_bytes, line) == checked


@PROPERTY
@given(st.one_of(JSON_VALUES.map(line_of), st.binary(max_size=40), st.text(max_size=40).map(str.encode)))
def test_from_bytes_reads_any_line_as_from_json_does(line):
    assert outcome(GameRecord.from_bytes, line) == outcome(old, line)


def test_a_valid_line_is_read_without_pythons_parser(monkeypatch):
    line = line_of(VALID, separators=(",", ":"))

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("json.loads called on a valid line")

    monkeypatch.setattr(records_module.json, "loads", refused)
    record = GameRecord.from_bytes(line)
    assert record.winner == "black" and [m.ms for m in record.moves] == [1.5, 2] and type(record.moves[1].ms) is int


# -- each kind of wrong field, refused with its reason ----------------------------------

def changed(field: str, value: Any) -> bytes:
    record = json.loads(json.dumps(VALID))
    if field.startswith("moves."):
        record["moves"][0][field.removeprefix("moves.")] = value
    elif value is _MISSING:
        del record[field]
    else:
        record[field] = value
    return line_of(record)


_MISSING = object()


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("winner", _MISSING, "bad winner None: missing"),
    ("reason", _MISSING, "bad reason None: missing"),
    ("round", MAX_ROUND, f"bad round {MAX_ROUND}: a whole number from 0 to {MAX_ROUND - 1}"),
    ("seed", True, "bad seed True: a whole number from 0 to"),
    ("seed", 1.0, "bad seed 1.0: a whole number from 0 to"),
    ("opening", 10**6, "bad opening 1000000: a whole number from 0 to"),
    ("index", -1, "bad index -1: a whole number from 0 to"),
    ("pair", [1], "bad pair [1]"),
    ("game_id", "", "bad game_id ''"),
    ("game_id", "\x1b]0;x\x07", "bad game_id '\\x1b]0;x\\x07'"),
    ("game", "chess", "bad game 'chess': not one of"),
    ("players", {"black": "a", "pink": "b"}, "bad players {'black': 'a', 'pink': 'b'}: the oxono colours"),
    ("players", {"pink": "a", "black": "x" * 101}, "bad players (dict of 2)"),
    ("reason", "checkmate", "bad reason 'checkmate': not a known reason"),
    ("winner", "white", "bad winner 'white'"),
    ("winner", ["pink"], "bad winner ['pink']"),
    ("forfeit_by", "black", "bad forfeit_by 'black': the winner of a forfeit is the other colour"),
    ("detail", 5, "bad detail 5"),
    ("opening_moves", 5, "bad opening_moves 5"),
    ("time_control", {"initial_ms": -1}, "bad time_control {'initial_ms': -1}"),
    ("time_control", {"hours": 1}, "bad time_control {'hours': 1}"),
    ("scores", {"pink": float("inf")}, "bad scores (dict of 1)"),
    ("versions", {"pink": "1"}, "bad versions {'pink': '1'}"),
    ("played_on", {"host": "h", "rack": 1}, "bad played_on {'host': 'h', 'rack': 1}"),
    ("played_on", {"host": "h", "speed": -1}, "bad played_on {'host': 'h', 'speed': -1}"),
    ("time_scale", -5.0, "bad time_scale -5.0"),
    ("time_scale", [1], "bad time_scale [1]"),
    ("time_scale", 1e300, "bad time_scale 1e+300"),
    ("network_margin_ms", {"pink": -1}, "bad network_margin_ms {'pink': -1}"),
    ("ended_at", 5, "bad ended_at 5"),
    ("moves", [5], "bad moves [5]"),
    ("moves", [{"move": "a1", "ms": 1}] * 40, "bad moves '40 moves': a game of oxono has at most"),
    ("moves.move", "", "bad move ''"),
    ("moves.move", "x" * 33, "bad move 'xxxx"),
    ("moves.move", "\x9b31m", "bad move '\\x9b31m'"),
    ("moves.ms", -1, "bad move time -1"),
    ("moves.ms", "1", "bad move time '1'"),
    ("moves.ms", False, "bad move time False"),
    ("moves.ms", float("nan"), "bad move time nan"),
    ("moves.ms", float("inf"), "bad move time inf"),
    ("moves.info", [1], "bad move info [1]: 'info' must be a JSON object, not"),
    ("moves.info", {"x": "y" * MAX_INFO_BYTES}, f"over the limit of {MAX_INFO_BYTES}"),
])
def test_each_wrong_field_is_refused_with_its_reason(field, value, reason):
    line = changed(field, value)
    with pytest.raises(ValueError) as refused:
        GameRecord.from_bytes(line)
    told = str(refused.value)
    assert reason in told and "\n" not in told
    assert outcome(old, line) == ("refused", told)


#: A record as the arena writes most: its checks are the plain check's (:meth:`GameRecord._plainly_valid`).
PLAIN = {**VALID, "reason": RULE_REASONS[0], "forfeit_by": None, "detail": None}


@pytest.mark.parametrize(("field", "value"), [
    ("time_scale", -5.0), ("time_scale", [1]), ("time_scale", True), ("network_margin_ms", {"pink": -1}),
    ("played_on", {"host": "h", "speed": 0}), ("scores", {"pink": "x"}), ("time_controls", {"pink": 5}),
    ("versions", {"pink": "1"}), ("pair", -1), ("ended_at", 5),
])
def test_a_wrong_field_of_a_plain_record_is_refused_too(field, value):
    assert GameRecord.from_bytes(line_of(PLAIN))._plainly_valid()
    line = line_of({**PLAIN, field: value})
    with pytest.raises(ValueError, match=f"bad {field}"):
        GameRecord.from_bytes(line)
    assert outcome(old, line)[0] == "refused"


def test_a_line_cannot_choose_the_bytes_its_record_is_written_as():
    forged = base64.b64encode(b'{"game_id":"forged"}\n').decode()
    record = GameRecord.from_bytes(line_of({**VALID, "_line": forged}))
    assert record._line is None and b"forged" not in record.to_line()


def test_what_only_pythons_parser_reads_is_read_as_before():
    for line in (b"\xef\xbb\xbf" + line_of(VALID), line_of({**VALID, "note": math.nan}),
                 line_of({**VALID, "note": "\ud800"}, ensure_ascii=True)):
        assert outcome(GameRecord.from_bytes, line)[0] == "read"
        assert outcome(GameRecord.from_bytes, line) == outcome(old, line)


def test_the_detail_of_a_forfeit_is_cleaned_as_before():
    line = line_of({**VALID, "detail": "\x1b]0;PWNED\x07 " + "y" * 2 * MAX_DETAIL_CHARS})
    record = GameRecord.from_bytes(line)
    assert record.detail == old(line).detail and record.detail.isprintable() and len(record.detail) <= MAX_DETAIL_CHARS + len("...")


# -- the moves of a plain line, checked all at once ---------------------------------------

def nested(depth: int) -> dict[str, Any]:
    """An info ``depth`` levels deep (itself the first)."""
    value: Any = 1
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return {"v": value}


#: Infos about the bounds of bound_info and of the check all at once: their size as
#: msgspec writes them and as strict_dumps does (floats with exponents), their depth.
EDGE_INFOS = st.one_of(
    st.integers(2300, MAX_INFO_BYTES + 10).map(lambda n: {"s": "x" * n}),
    st.integers(300, 900).map(lambda n: {"f": [1e16] * n}),
    st.integers(200, 700).map(lambda n: {"f": [1e-7] * n, "g": -2.5e300}),
    st.integers(1, 20).map(nested),
    st.just({}), st.none(),
    st.dictionaries(st.sampled_from(["score", "pv", "\x7f", "é"]), SCALARS, max_size=3),
)
EDGE_MOVES = st.lists(st.fixed_dictionaries(
    {"move": st.sampled_from(["Xc5 c6", "a1", "", "x" * 32, "x" * 33, "a\x7fb", "é"]),
     "ms": st.sampled_from([0, 1, 2.5, -0.0, -1, 1e308, 2**70, 1e16])},
    optional={"info": EDGE_INFOS, "latency_ms": st.sampled_from([None, 0, 3.5, -1])},
), max_size=24)


@PROPERTY
@given(EDGE_MOVES, st.booleans())
def test_the_moves_of_a_plain_line_checked_at_once_are_read_as_one_at_a_time(moves, ascii_only):
    line = line_of({**PLAIN, "moves": moves}, ensure_ascii=ascii_only, separators=(",", ":"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records_module, "_surely_valid_moves", lambda moves: False)
        checked = outcome(GameRecord.from_bytes, line)
    assert outcome(GameRecord.from_bytes, line) == checked == outcome(old, line)


def test_the_moves_of_a_plain_line_are_not_checked_one_at_a_time(monkeypatch):
    # (a league's first read checks tens of millions of moves: one at a time cost a tenth of reading a line)
    line = line_of(PLAIN, separators=(",", ":"))
    read = outcome(old, line)
    monkeypatch.setattr(records_module, "_check_moves", lambda moves: pytest.fail("checked one at a time"))
    assert outcome(GameRecord.from_bytes, line) == read


def test_moves_past_a_bound_of_a_plain_line_are_refused_with_their_reason():
    for moves, reason in (([{"move": "a1", "ms": 1, "info": {"s": "x" * MAX_INFO_BYTES}}], "over the limit"),
                          ([{"move": "a1", "ms": 1, "info": nested(17)}], "nested more than"),
                          ([{"move": "x" * 33, "ms": 1}], "bad move"), ([{"move": "a1", "ms": -1}], "bad move time"),
                          ([{"move": "a1", "ms": 1, "latency_ms": -1}], "bad move latency_ms")):
        with pytest.raises(ValueError, match=reason):
            GameRecord.from_bytes(line_of({**PLAIN, "moves": moves}, separators=(",", ":")))
