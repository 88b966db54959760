"""Compact turns: a bot that answers ``hello`` with ``"compact_turns": true``
gets ``turn`` without ``state`` and ``legal_moves``; its moves are checked and
its forfeits recorded exactly as in full mode.  And the C bot that uses them,
with its own move generator, held to the engine."""

import random
import subprocess
import sys

import pytest

import engine
import needs
from arena.bot import protocol
from arena.game.clock import Clock, TimeControl
from arena.game.referee import play_game
from builders import BOTS, ROOT, bot_player, replayed, spec

FAST = TimeControl(per_move_ms=500)

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


@pytest.fixture(scope="module")
def oxono_bot(tmp_path_factory) -> str:
    gcc = needs.program("gcc", "apt-get install gcc")
    binary = tmp_path_factory.mktemp("oxono_bot") / "oxono_bot"
    # -Werror: the bot promises to build without warnings on a fresh machine.
    result = subprocess.run(
        [gcc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-o", str(binary),
         str(ROOT / "bots" / "c" / "oxono_bot.c")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    return str(binary)


def bot(tmp_path, name, cmd):
    return bot_player(name, cmd, log_path=tmp_path / f"{name}.log", startup_timeout_s=10.0, quit_grace_s=1.0)


def engine_bot(tmp_path, name, *args):
    return bot(tmp_path, name, [sys.executable, str(BOTS / "compact_bot.py"), *args])


def some_opening(number):
    """Three legal moves from start position ``number % 2``, as an opening suite gives them."""
    game = engine.get_game("oxono")
    state, moves = game.new_state(opening=number % 2), []
    for _ in range(3):
        legal = game.legal_moves(state)
        moves.append(legal[number % len(legal)])
        state = game.apply(state, moves[-1])
    return moves


def test_compact_turn_lines_are_the_plain_encoding():
    clock = Clock(TimeControl(initial_ms=5000, increment_ms=100))
    clock.charge(1, 1234.5)
    lines = protocol.TurnLines('g"1')
    for seat in (0, 1):
        for ply, last in ((0, None), (7, "Xc5 c6")):
            plain = protocol.encode(protocol.compact_turn('g"1', ply, last, clock.to_json(seat)))
            assert lines.compact(ply, last, clock.to_json_text(seat)) == plain
    per_move = Clock(FAST)
    assert per_move.to_json_text(0) == protocol.encode(per_move.to_json(0)).decode().strip()


def test_plain_move_reads_what_decode_reads():
    for line in ['{"type":"move","move":"Xc5 c6"}', '{"type": "move", "move": "Oa1 a2"}', '{"type":"move","move":""}']:
        assert protocol.plain_move(line) == protocol.decode(line, "move")["move"]
    # Anything else is left to decode: escapes, control characters, more keys, other types.
    for line in ['{"type":"move","move":"Xc5\\u0020c6"}', '{"type":"move","move":"a\tb"}',
                 '{"type":"move","move":"x","info":{}}', '{"type":"move","move":"a"},"x":"b"}',
                 '{"type":"error","message":"x"}', '{"type":"move","move":"Xc5 c6"} ']:
        assert protocol.plain_move(line) is None


def test_a_compact_bot_gets_turns_without_state_and_its_opponent_full_ones(tmp_path):
    compact = engine_bot(tmp_path, "compact", "compact", "first")
    full = engine_bot(tmp_path, "full", "full", "first")
    try:
        record = play_game(spec(1, [compact.name, full.name]), [compact, full], FAST)
    finally:
        compact.close()
        full.close()
    assert record.forfeit_by is None and record.reason in ("alignment", "exhausted")
    game, state = replayed(record)
    assert game.outcome(state) is not None
    compact_keys = (tmp_path / "compact.log").read_text().splitlines()
    full_keys = (tmp_path / "full.log").read_text().splitlines()
    assert compact_keys and set(compact_keys) == {"turn keys: ['clock', 'game_id', 'last_move', 'ply', 'type']"}
    assert full_keys and set(full_keys) == {
        "turn keys: ['clock', 'game_id', 'last_move', 'legal_moves', 'ply', 'state', 'type']"
    }


@pytest.mark.parametrize("misbehaviour", ["illegal", "garbage", "slow"])
def test_forfeits_are_the_same_with_compact_turns(tmp_path, misbehaviour):
    records = {}
    for mode in ("compact", "full"):
        culprit = engine_bot(tmp_path, f"{mode}-culprit", mode, misbehaviour)
        opponent = engine_bot(tmp_path, f"{mode}-opponent", mode, "first")
        try:
            records[mode] = play_game(spec(1, [culprit.name, opponent.name]), [culprit, opponent], FAST)
        finally:
            culprit.close()
            opponent.close()
    compact, full = records["compact"], records["full"]
    expected = {"illegal": "illegal_move", "garbage": "illegal_move", "slow": "timeout"}[misbehaviour]
    assert compact.reason == full.reason == expected
    assert compact.forfeit_by == full.forfeit_by == "pink" and compact.winner == "black"
    assert [m.move for m in compact.moves] == [m.move for m in full.moves]
    if misbehaviour != "slow":  # a timeout's detail holds the measured time
        assert compact.detail == full.detail
        assert "not a legal move" in compact.detail


def test_oxono_bot_asks_for_compact_turns_and_plays_whole_games(tmp_path, oxono_bot):
    a, b = bot(tmp_path, "a", [oxono_bot]), bot(tmp_path, "b", [oxono_bot])
    try:
        # Every third game starts after an opening's moves, as with an opening suite.
        records = []
        for n in range(40):
            seats = [a, b] if n % 2 else [b, a]
            moves = tuple(some_opening(n)) if n % 3 == 0 else ()
            game = spec(n, [p.name for p in seats], opening=n % 2, opening_moves=moves)
            records.append(play_game(game, seats, FAST))
        assert a.compact_turns and b.compact_turns and a.starts == b.starts == 1
    finally:
        a.close()
        b.close()
    for record in records:
        assert record.forfeit_by is None, record.detail
        game, state = replayed(record)
        assert game.outcome(state) is not None
        if record.reason == "alignment":  # won by whoever made the row: the last mover
            assert record.winner == game.colors[(game.ply(state) - 1) % 2]


def test_oxono_bot_move_generator_agrees_with_the_engine(oxono_bot):
    """Over a bare pipe, full turns: the bot checks its own legal moves
    against ``legal_moves`` and sends ``error`` if they differ in any way."""
    game = engine.get_game("oxono")
    rng = random.Random(11)
    process = subprocess.Popen([oxono_bot], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    clock = '{"remaining_ms":1000}'

    def send(line: str) -> None:
        process.stdin.write(line if line.endswith("\n") else line + "\n")
        process.stdin.flush()

    try:
        send(protocol.encode(protocol.hello("oxono", "x", {})).decode())
        assert '"compact_turns":true' in process.stdout.readline()
        turns = 0
        for number in range(150):
            state = game.new_state(seed=number, opening=number % 2)
            seat = number % 3 % 2  # both colours
            send(protocol.encode(protocol.new_game(f"g{number}", "oxono", game.colors[seat], {}, {}, game.to_json(state),
                                                   number)).decode())
            lines, last = protocol.TurnLines(f"g{number}"), None
            while game.outcome(state) is None:
                legal = game.legal_moves(state)
                if game.to_move(state) == seat:
                    send(lines.full(game.ply(state), game.to_json_text(state), legal, last, clock).decode())
                    answer = process.stdout.readline()
                    move = protocol.decode(answer, "move").get("move")
                    assert move in legal, answer
                    turns += 1
                else:
                    move = rng.choice(legal)
                state, last = game.apply(state, move), move
            send(protocol.encode(protocol.game_over(f"g{number}", None, "x", [], None)).decode())
        assert turns > 800
    finally:
        process.stdin.close()
        process.wait(5)


def test_oxono_bot_refuses_other_games_and_a_wrong_last_move(oxono_bot):
    out = subprocess.run(
        [oxono_bot], input=protocol.encode(protocol.hello("yoxii", "x", {})).decode(),
        capture_output=True, text=True, timeout=10,
    ).stdout
    assert protocol.decode(out, "ready")["type"] == "error"
    game = engine.get_game("oxono")
    state = game.new_state(opening=0)
    lines = [
        protocol.encode(protocol.hello("oxono", "x", {})),
        protocol.encode(protocol.new_game("g", "oxono", "black", {}, {}, game.to_json(state), 1)),
        protocol.TurnLines("g").compact(1, "Xa1 a2", '{"remaining_ms":1}'),  # not a legal first move
    ]
    out = subprocess.run([oxono_bot], input=b"".join(lines), capture_output=True, timeout=10).stdout.decode()
    answer = protocol.decode(out.splitlines()[1], "move")
    assert answer["type"] == "error" and "last_move" in answer["message"]
