"""GameRecord's line: encoded once, the same bytes as before, strict JSON; the reasons a record may give."""

import dataclasses
import json
import random

import builders
import engine
from arena.game.records import GameRecord, MoveRecord, REASONS, RULE_REASONS


def record(**changes):
    """A record with every field set (a move with an ``info``, one without), as ``changes`` change it."""
    full = builders.record(
        3, "a", "b", "pink", game_id="r1-p1-g1", seed=7, opening=1,
        moves=[MoveRecord("Xc5 c6", 1.25), MoveRecord("Od4 d3", 0.5, {"depth": 3, "pv": ["é", "Xa1 a2"]})],
        started_at="2026-01-01T00:00:00.000+00:00", ended_at="2026-01-01T00:00:01.000+00:00", round=2,
    )
    return dataclasses.replace(full, **changes)


def old_line(game: GameRecord) -> bytes:
    """How the store wrote a record before records carried their own line."""
    data = dataclasses.asdict(game)
    del data["_line"]  # the cache of the line itself, which did not exist
    del data["time_controls"]  # time odds, which did not exist either
    del data["played_on"]  # nor where a game was played
    del data["network_margin_ms"]  # nor remote bots
    del data["time_scale"]  # nor clocks scaled to a node's speed
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


def test_where_a_game_was_played_goes_last_and_round_trips():
    game = record()
    game.played_on = {"host": "node-a", "node_id": "a" * 56, "actor": 2, "nice": 0}
    line = game.to_line()
    assert line.endswith(b',"played_on":{"host":"node-a","node_id":"' + b"a" * 56 + b'","actor":2,"nice":0}}\n')
    assert GameRecord.from_line(line).played_on == game.played_on
    assert GameRecord.from_json(json.loads(line)).played_on == game.played_on


def test_an_info_strict_json_cannot_hold_is_left_out():
    game = record(moves=[MoveRecord("Xc5 c6", 1.0, {"score": float("nan")}), MoveRecord("Od4 d3", 2.0, {"ok": 1})])
    data = json.loads(game.to_line(), parse_constant=lambda name: pytest_fail(name))
    assert [m.get("info") for m in data["moves"]] == [None, {"ok": 1}]


def pytest_fail(name):
    raise AssertionError(f"{name} in a record line")


def test_every_reason_the_engines_give_is_a_known_reason():
    rng = random.Random(1)
    seen = set()
    for name in engine.GAMES:
        game = engine.get_game(name)
        for seed in range(200):
            state = game.new_state(seed=seed)
            while game.outcome(state) is None:
                state = game.apply(state, rng.choice(game.legal_moves(state)))
            seen.add(game.outcome(state).reason)
    assert seen <= set(RULE_REASONS) and set(RULE_REASONS) <= set(REASONS)
    assert {"alignment", "blocked"} <= seen  # both games were played to their end
