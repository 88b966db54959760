import pytest

from arena.game.clock import Clock, TimeControl, parse_time_control


@pytest.mark.parametrize(
    "text, expected",
    [
        ("5+0.1", TimeControl(initial_ms=5000, increment_ms=100)),
        (" 10 + 2 ", TimeControl(initial_ms=10000, increment_ms=2000)),
        ("60", TimeControl(initial_ms=60000, increment_ms=0)),
        (3, TimeControl(initial_ms=3000, increment_ms=0)),
        (0.5, TimeControl(initial_ms=500, increment_ms=0)),
        ("move 0.5", TimeControl(per_move_ms=500)),
        ("MOVE 2", TimeControl(per_move_ms=2000)),
    ],
)
def test_parse_time_control(text, expected):
    assert parse_time_control(text) == expected


@pytest.mark.parametrize("text", ["", "fast", "5+", "+1", "-5+1", "move", "move -1", "0+0", "move 0", True, None, [5]])
def test_bad_time_controls_are_refused_with_the_accepted_forms(text):
    with pytest.raises(ValueError) as info:
        parse_time_control(text)
    assert "time" in str(info.value)


def test_str_round_trips():
    for text in ("5+0.1", "move 0.5", "60+0"):
        assert str(parse_time_control(text)) == text


def test_json_round_trips_and_matches_protocol_shapes():
    chess = parse_time_control("5+0.1")
    per_move = parse_time_control("move 0.5")
    assert chess.to_json() == {"initial_ms": 5000, "increment_ms": 100}
    assert per_move.to_json() == {"per_move_ms": 500}
    assert TimeControl.from_json(chess.to_json()) == chess
    assert TimeControl.from_json(per_move.to_json()) == per_move


def test_chess_clock_charges_and_adds_increment():
    clock = Clock(TimeControl(initial_ms=1000, increment_ms=100), margin_ms=50)
    assert clock.budget_ms(0) == 1050
    assert clock.charge(0, 400)
    assert clock.remaining_ms == [700, 1000]
    assert clock.to_json(0) == {"remaining_ms": 700, "opponent_ms": 1000, "increment_ms": 100}
    assert clock.to_json(1) == {"remaining_ms": 1000, "opponent_ms": 700, "increment_ms": 100}


def test_flag_falls_only_beyond_remaining_time_plus_margin():
    clock = Clock(TimeControl(initial_ms=1000, increment_ms=0), margin_ms=50)
    assert clock.charge(1, 1040)  # inside the margin: not a loss
    assert clock.remaining_ms[1] == 0
    assert clock.budget_ms(1) == 50
    assert not clock.charge(1, 51)


def test_per_move_budget_does_not_carry_over():
    clock = Clock(TimeControl(per_move_ms=500), margin_ms=20)
    assert clock.charge(0, 10)
    assert clock.budget_ms(0) == 520
    assert clock.to_json(0) == {"remaining_ms": 500}
    assert not clock.charge(0, 521)
