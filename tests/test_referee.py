"""The referee and BotPlayer against well-behaved and misbehaving bots.

Every misbehaving bot must end in the right forfeit, in bounded time, with its
opponent told the result and keeping its process, and no process left behind.
"""

import json
import sys
import time
from pathlib import Path

import pytest

import engine
from arena.game.clock import Clock, TimeControl
from arena.game.records import GameRecord
from arena.game.referee import over_budget, play_game
from builders import BOTS, bot_player, replayed, spec

FAST = TimeControl(per_move_ms=500)

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def player(tmp_path, script, *args, name=None, startup_timeout_s=3.0):
    name = name or Path(script).stem
    cmd = (sys.executable, str(BOTS / script), *map(str, args))
    return bot_player(name, cmd, log_path=tmp_path / f"{name}.log", startup_timeout_s=startup_timeout_s,
                      quit_grace_s=1.0)


def play(players, control=FAST, number=1, **fields):
    """``players`` (in seat order) play game ``number`` (``fields``: of its spec); the record and how long it took."""
    started = time.monotonic()
    record = play_game(spec(number, [p.name for p in players], **fields), players, control)
    return record, time.monotonic() - started


def log_shows(path, text, timeout=5.0):
    """The bot logs what it receives on stderr, which reaches the file a moment later."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def closing():
    opened = []
    yield opened.extend
    for p in opened:
        p.close()


def test_a_clean_game_reuses_both_processes(tmp_path, closing):
    a, b = player(tmp_path, "echo_bot.py", name="a"), player(tmp_path, "echo_bot.py", name="b")
    closing([a, b])
    first, _ = play([a, b])
    pids = (a.process.pid, b.process.pid)
    second, _ = play([b, a], number=2, opening=1)
    assert (a.process.pid, b.process.pid) == pids and a.starts == b.starts == 1
    for record in (first, second):
        assert record.forfeit_by is None and record.reason in ("alignment", "exhausted")
        assert 1 <= len(record.moves) <= 32
        # replaying the moves on the engine reaches the recorded result
        game, state = replayed(record)
        outcome = game.outcome(state)
        assert outcome is not None and outcome.reason == record.reason
        assert record.winner == (None if outcome.winner is None else game.colors[outcome.winner])
    assert second.players == {"pink": "b", "black": "a"}
    assert log_shows(tmp_path / "a.log", "game_over")


@pytest.mark.parametrize(
    "script, args, reason, words",
    [
        ("crash_midgame.py", (), "crash", "exit"),
        ("hang.py", (), "timeout", "ms margin)"),
        ("slow.py", (2,), "timeout", "no move after"),
        ("non_json.py", (), "protocol_error", "not JSON"),
        ("wrong_type.py", (), "protocol_error", "expected a 'move'"),
        ("illegal_move.py", (), "illegal_move", "Zz9 z9"),
        ("huge_line.py", (), "protocol_error", "line"),
        ("bot_error.py", (), "bot_error", "I give up"),
        ("no_read.py", (), "startup_failure", "hello"),
        ("exit_at_start.py", (), "startup_failure", ""),
        ("no_hello.py", (), "startup_failure", "no answer to 'hello'"),
        ("garbage_hello.py", (), "startup_failure", "banana"),
        ("hello_then_die.py", (), "crash", ""),
        ("double_move.py", (), "protocol_error", "out of turn"),
        ("exit_after_move.py", (), "crash", "exited with code 0"),
        ("fork_child.py", (), "crash", ""),
    ],
)
@pytest.mark.parametrize("seat", [0, 1])
def test_misbehaving_bot_forfeits_and_opponent_keeps_its_process(tmp_path, closing, script, args, reason, words, seat):
    bad = player(tmp_path, script, *args, name="bad")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([bad, good])
    seats = [bad, good] if seat == 0 else [good, bad]
    good.ensure_started()
    good_pid = good.process.pid
    record, elapsed = play(seats)
    colors = engine.get_game("oxono").colors
    assert record.reason == reason, record.detail
    assert record.forfeit_by == colors[seat]
    assert record.winner == colors[1 - seat]
    assert words in record.detail
    # bounded: start-up (3 s) or one move budget, plus slack; never a hang
    assert elapsed < 8
    assert good.process is not None and good.process.alive and good.process.pid == good_pid
    assert log_shows(tmp_path / "good.log", '"game_over"')


def test_stderr_flood_neither_blocks_nor_fills_the_disk(tmp_path, closing):
    flood = player(tmp_path, "stderr_flood.py", name="flood")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([flood, good])
    for number in range(3):
        record, _ = play([flood, good], number=number)
        assert record.forfeit_by is None, record.detail
    assert (tmp_path / "flood.log").stat().st_size < 11 * 1024 * 1024


def test_a_crashed_bot_is_restarted_for_the_next_game(tmp_path, closing):
    crashy = player(tmp_path, "crash_midgame.py", name="crashy")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([crashy, good])
    first, _ = play([crashy, good])
    second, _ = play([good, crashy], number=2)
    assert first.reason == second.reason == "crash"
    assert crashy.starts == 2 and good.starts == 1


def test_a_timed_out_bot_is_replaced_so_its_late_answer_is_not_misread(tmp_path, closing):
    slow = player(tmp_path, "slow.py", 0.8, name="slow")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([slow, good])
    first, _ = play([slow, good], control=TimeControl(per_move_ms=300))
    assert first.reason == "timeout"
    second, _ = play([slow, good], control=TimeControl(per_move_ms=3000), number=2)
    assert second.forfeit_by is None and slow.starts == 2


def test_no_false_time_losses_for_a_bot_using_half_its_time(tmp_path, closing):
    half = player(tmp_path, "half_time.py", name="half")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([half, good])
    control = TimeControl(per_move_ms=80)
    for number in range(6):
        seats = [half, good] if number % 2 == 0 else [good, half]
        record, _ = play(seats, control=control, number=number, opening=number // 2 % 2)
        assert record.forfeit_by is None, record.detail
        half_moves = record.moves[number % 2 :: 2]
        assert all(m.ms >= 35 for m in half_moves)  # its thinking time is charged


def test_yoxii_game_records_scores(tmp_path, closing):
    a, b = player(tmp_path, "echo_bot.py", name="a"), player(tmp_path, "echo_bot.py", name="b")
    for p in (a, b):
        p.game = "yoxii"
    closing([a, b])
    record, _ = play([a, b], game="yoxii")
    assert record.reason == "blocked"
    assert set(record.scores) == {"white", "red"}
    white, red = record.scores["white"], record.scores["red"]
    if record.winner == "white":
        assert white >= red
    elif record.winner == "red":
        assert red >= white


def test_record_serialises_to_one_json_object(tmp_path, closing):
    a, b = player(tmp_path, "echo_bot.py", name="a"), player(tmp_path, "echo_bot.py", name="b")
    closing([a, b])
    record, _ = play([a, b])
    data = json.loads(json.dumps(record.to_json()))
    assert GameRecord.from_json(data) == record
    assert {"game_id", "game", "players", "seed", "moves", "winner", "reason", "started_at", "ended_at"} <= set(data)
    assert data["started_at"] <= data["ended_at"]


@pytest.mark.parametrize("opening", [0, 1])
def test_an_illegal_move_is_explained_by_the_rules(tmp_path, closing, opening):
    bad = player(tmp_path, "unreachable_move.py", name="bad")
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([bad, good])
    record, _ = play([bad, good], opening=opening)
    assert record.reason == "illegal_move" and record.forfeit_by == "pink" and record.moves == []
    assert record.detail.startswith("played 'Xa1 a2', not a legal move: ")
    assert "a1 is not on either" in record.detail  # the engine's own reason


def test_a_very_long_move_string_is_refused_briefly(tmp_path, closing):
    script = tmp_path / "long_move.py"
    script.write_text(
        f"import sys; sys.path.insert(0, {str(BOTS)!r})\n"
        "from _botlib import play\n"
        "play(lambda turn, count: {'type': 'move', 'move': 'X' * 5000})\n"
    )
    bad = bot_player("bad", (sys.executable, str(script)))
    good = player(tmp_path, "echo_bot.py", name="good")
    closing([bad, good])
    record, _ = play([bad, good])
    assert record.reason == "illegal_move"
    assert record.detail.startswith("played a 5000-character string, not a move")
    assert len(record.detail) < 120


def test_a_game_starts_after_its_opening_moves(tmp_path, closing):
    a, b = player(tmp_path, "echo_bot.py", name="a"), player(tmp_path, "echo_bot.py", name="b")
    closing([a, b])
    opening = ("Xd5 d6", "Oc4 b4", "Xd4 d3")  # three plies: black (seat 1) moves first after it
    game_spec = spec(0, ("a", "b"), game_id="o1", opening=1, seed=3, pair=7, opening_moves=opening)
    record = play_game(game_spec, [a, b], FAST)
    assert record.opening_moves == list(opening) and record.pair == 7 and record.opening == 1
    assert record.forfeit_by is None
    game = engine.get_game("oxono")
    state = game.new_state(opening=1)
    for move in opening:
        state = game.apply(state, move)
    after_opening = game.to_json(state)
    # The bots' moves start from the opening's position, black first.
    for move in record.moves:
        state = game.apply(state, move.move)
    assert game.outcome(state).reason == record.reason
    # new_game carries the position after the opening and the opening's moves.
    for log in ("a.log", "b.log"):
        assert log_shows(tmp_path / log, '"game_over"')
        lines = [json.loads(line[len("got: "):]) for line in (tmp_path / log).read_text().splitlines()
                 if line.startswith("got: {")]
        new_game = next(m for m in lines if m["type"] == "new_game")
        assert new_game["state"] == after_opening and new_game["opening_moves"] == list(opening)
        over = next(m for m in lines if m["type"] == "game_over")
        assert over["opening_moves"] == list(opening)
        assert over["moves"] == [*opening, *(m.move for m in record.moves)]
    first_turn = json.loads(next(line[len("got: "):] for line in (tmp_path / "b.log").read_text().splitlines()
                                 if '"type":"turn"' in line))
    assert first_turn["ply"] == 3 and first_turn["state"] == after_opening


def test_a_timeout_never_reads_as_the_budget_itself():
    # A bot of the course's day: "no move after 1050 ms, over its budget of 1050 ms".
    clock = Clock(TimeControl(initial_ms=1000, increment_ms=50), margin_ms=50)
    assert over_budget("no move after", 1050.3, clock, 0, 1050.0) == \
        "no move after 1050.3 ms, over its budget of 1050 ms (1000 ms on its clock + 50 ms margin)"
    assert over_budget("took", 1051.2, clock, 0, 1050.0).startswith("took 1051 ms, over its budget of 1050 ms")
