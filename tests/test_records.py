"""GameRecord's line: encoded once, the same bytes as before, strict JSON."""

import dataclasses
import json

from arena.game.records import GameRecord, MoveRecord


def record(**changes):
    base = GameRecord(
        game_id="r1-p1-g1", game="oxono", players={"pink": "a", "black": "b"}, seed=7, opening=1,
        time_control={"initial_ms": 5000, "increment_ms": 100},
        moves=[MoveRecord("Xc5 c6", 1.25), MoveRecord("Od4 d3", 0.5, {"depth": 3, "pv": ["é", "Xa1 a2"]})],
        winner="pink", reason="alignment", started_at="2026-01-01T00:00:00.000+00:00",
        ended_at="2026-01-01T00:00:01.000+00:00", index=3, round=2,
    )
    return dataclasses.replace(base, **changes)


def old_line(game: GameRecord) -> bytes:
    """How the store wrote a record before records carried their own line."""
    data = dataclasses.asdict(game)
    del data["_line"]  # the cache of the line itself, which did not exist
    data["moves"] = [m.to_json() for m in game.moves]
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def test_the_line_is_the_bytes_the_store_always_wrote():
    for game in (record(), record(winner=None, reason="exhausted"),
                 record(winner="black", reason="timeout", forfeit_by="pink", detail="no move within 50 ms"),
                 record(game="yoxii", players={"white": "a", "red": "b"}, scores={"white": 3, "red": 5})):
        expected = old_line(game)
        assert game.to_line() == expected


def test_from_line_round_trips_and_keeps_the_bytes():
    line = record().to_line()
    back = GameRecord.from_line(line)
    assert back == record() and back.to_line() is line


def test_an_info_strict_json_cannot_hold_is_left_out():
    game = record(moves=[MoveRecord("Xc5 c6", 1.0, {"score": float("nan")}), MoveRecord("Od4 d3", 2.0, {"ok": 1})])
    data = json.loads(game.to_line(), parse_constant=lambda name: pytest_fail(name))
    assert [m.get("info") for m in data["moves"]] == [None, {"ok": 1}]


def pytest_fail(name):
    raise AssertionError(f"{name} in a record line")
