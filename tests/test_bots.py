"""The example bots: each speaks the protocol as a real subprocess, the random
bots replay under a seed, the greedy policy takes wins and dodges threats, and
the random bot quoted in docs/protocol.md is the real file."""

from __future__ import annotations

import json
import queue
import random
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import engine
import needs
from bots.greedy import choose_move
from builders import ROOT

BOTS = ROOT / "bots"

# Generous: the machine running the tests may be busy.
READ_TIMEOUT_S = 30.0
# The protocol's grace period between quit and a kill.
QUIT_GRACE_S = 2.0


class Bot:
    """One bot process driven line by line; a thread reads its stdout so that a
    read can time out instead of hanging the test."""

    def __init__(self, command: list[str], stderr_path: Path) -> None:
        self._stderr_path = stderr_path
        self._stderr = stderr_path.open("w")
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def read(self, timeout: float = READ_TIMEOUT_S) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no answer within {timeout} s; stderr:\n{self.stderr()}")
        if line is None:
            pytest.fail(f"the bot closed its stdout; stderr:\n{self.stderr()}")
        message = json.loads(line)
        assert isinstance(message, dict), line
        return message

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def exited_within(self, seconds: float) -> bool:
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stderr(self) -> str:
        self._stderr.flush()
        return self._stderr_path.read_text()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    gcc = needs.program("gcc", "apt-get install gcc")
    binary = tmp_path_factory.mktemp("c_bot") / "random_bot"
    # -Werror: the bot promises to build without warnings.
    result = subprocess.run(
        [gcc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(BOTS / "c" / "random_bot.c")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return [str(binary)]


@pytest.fixture(scope="session")
def js_bot() -> list[str]:
    node = needs.program("node", "apt-get install nodejs")
    return [node, str(BOTS / "js" / "random_bot.js")]


PYTHON_BOTS = {
    "random_bot.py": [sys.executable, str(BOTS / "random_bot.py")],
    "-m bots.random_bot": [sys.executable, "-m", "bots.random_bot"],
    "-m bots.greedy": [sys.executable, "-m", "bots.greedy"],
}
RANDOM_BOTS = ["random_bot.py", "c", "js"]


@pytest.fixture
def command(request: pytest.FixtureRequest) -> list[str]:
    name = request.param
    if name == "c":
        return request.getfixturevalue("c_bot")
    if name == "js":
        return request.getfixturevalue("js_bot")
    return PYTHON_BOTS[name]


@pytest.fixture
def start(tmp_path: Path):
    bots: list[Bot] = []

    def _start(command: list[str]) -> Bot:
        bot = Bot(command, tmp_path / f"stderr-{len(bots)}.log")
        bots.append(bot)
        return bot

    yield _start
    for bot in bots:
        bot.kill()


def hello(game: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "hello", "protocol": 1, "game": game, "name": "under-test", "options": options or {}}


def new_game(game: str, game_id: str, seed: int | None) -> dict[str, Any]:
    rules = engine.get_game(game)
    message = {
        "type": "new_game",
        "game_id": game_id,
        "game": game,
        "you": rules.colors[0],
        "players": {rules.colors[0]: "under-test", rules.colors[1]: "other"},
        "time_control": {"initial_ms": 10000, "increment_ms": 100},
        "state": rules.to_json(rules.new_state(opening=0)),
    }
    if seed is not None:
        message["seed"] = seed
    return message


def turn(game: str, game_id: str, state: Any, last_move: str | None) -> dict[str, Any]:
    rules = engine.get_game(game)
    return {
        "type": "turn",
        "game_id": game_id,
        "ply": rules.ply(state),
        "state": rules.to_json(state),
        "legal_moves": rules.legal_moves(state),
        "last_move": last_move,
        "clock": {"remaining_ms": 9000, "opponent_ms": 9500, "increment_ms": 100},
    }


def play_game(bot: Bot, game: str, game_id: str, seed: int | None, plies: int) -> list[str]:
    """Let ``bot`` play both sides for ``plies`` moves (or to the end), checking
    every answer is legal, then end the game; returns the bot's moves."""
    rules = engine.get_game(game)
    bot.send(new_game(game, game_id, seed))
    state = rules.new_state(opening=0)
    moves: list[str] = []
    while len(moves) < plies and not rules.is_over(state):
        message = turn(game, game_id, state, moves[-1] if moves else None)
        bot.send(message)
        answer = bot.read()
        assert answer["type"] == "move", answer
        assert answer["move"] in message["legal_moves"]
        moves.append(answer["move"])
        state = rules.apply(state, answer["move"])
    over: dict[str, Any] = {"type": "game_over", "game_id": game_id, "winner": None, "reason": "exhausted", "moves": moves}
    if game == "yoxii":
        over.update(winner="white", reason="blocked", scores={"white": 11, "red": 9})
    bot.send(over)
    return moves


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
@pytest.mark.parametrize("command", [*PYTHON_BOTS, "c", "js"], indirect=True)
def test_bot_plays_two_games_and_quits(start, command: list[str], game: str) -> None:
    bot = start(command)
    bot.send(hello(game))
    ready = bot.read()
    assert ready["type"] == "ready"
    assert isinstance(ready.get("name"), str) and ready["name"]
    play_game(bot, game, "g1", seed=7, plies=3)
    # The same process plays a second game, as the arena's reuse does.
    play_game(bot, game, "g2", seed=8, plies=2)
    bot.send({"type": "quit"})
    assert bot.exited_within(QUIT_GRACE_S), "the bot did not exit after quit"
    assert bot.process.returncode == 0, bot.stderr()


@pytest.mark.parametrize("command", [*PYTHON_BOTS, "c", "js"], indirect=True)
def test_bot_exits_at_end_of_input(start, command: list[str]) -> None:
    bot = start(command)
    bot.send(hello("oxono"))
    assert bot.read()["type"] == "ready"
    bot.close_stdin()
    assert bot.exited_within(QUIT_GRACE_S), "the bot did not exit when its stdin closed"
    assert bot.process.returncode == 0, bot.stderr()


@pytest.mark.parametrize("command", [*PYTHON_BOTS, "c", "js"], indirect=True)
def test_bot_ignores_unknown_types_and_fields(start, command: list[str]) -> None:
    bot = start(command)
    bot.send({**hello("oxono"), "future_field": [1, {"type": "turn"}]})
    assert bot.read()["type"] == "ready"
    bot.send({"type": "ping_from_protocol_2", "payload": {"legal_moves": ["Xz9 z9"]}})
    rules = engine.get_game("oxono")
    # No seed: it is an extension a bot must not require.
    bot.send({**new_game("oxono", "g1", seed=None), "extra": {"seed": "not a number"}})
    state = rules.new_state(opening=0)
    message = {**turn("oxono", "g1", state, None), "hint": None}
    bot.send(message)
    answer = bot.read()
    assert answer["type"] == "move"
    assert answer["move"] in message["legal_moves"]


def test_c_bot_tolerates_spaced_json(start, c_bot: list[str]) -> None:
    # Other arenas may pretty-print; a "type" key nested in options must not fool it.
    bot = start(c_bot)
    bot.send('{ "type" : "hello" , "protocol": 1, "game": "oxono", "options": { "type": "turn" } }')
    assert bot.read()["type"] == "ready"
    bot.send('{"type": "new_game", "game_id": "g1", "seed": 5}')
    moves = ["Xc4 c5", "Od3 d2", "Xe3 e2"]
    bot.send('{ "type" :\t"turn", "state": {"legal_moves": ["no"]}, "legal_moves" : [ "Xc4 c5" ,\t"Od3 d2" , "Xe3 e2" ] }')
    answer = bot.read()
    assert answer["type"] == "move"
    assert answer["move"] in moves


@pytest.mark.parametrize("command", RANDOM_BOTS, indirect=True)
def test_random_bot_replays_under_a_seed(start, command: list[str]) -> None:
    def moves_of_one_process(seed: int) -> tuple[list[str], list[str]]:
        bot = start(command)
        bot.send(hello("oxono"))
        bot.read()
        first = play_game(bot, "oxono", "g1", seed=seed, plies=12)
        # new_game re-seeds, so the same seed in the same process replays too.
        second = play_game(bot, "oxono", "g2", seed=seed, plies=12)
        bot.send({"type": "quit"})
        return first, second

    first, second = moves_of_one_process(42)
    assert first == second
    assert moves_of_one_process(42) == (first, second)
    other, _ = moves_of_one_process(43)
    assert other != first


def test_greedy_seed_option_overrides_the_game_seed(start) -> None:
    def moves(options: dict[str, Any], seed: int) -> list[str]:
        bot = start(PYTHON_BOTS["-m bots.greedy"])
        bot.send(hello("oxono", options))
        bot.read()
        played = play_game(bot, "oxono", "g1", seed=seed, plies=4)
        bot.send({"type": "quit"})
        return played

    assert moves({"seed": 5}, seed=1) == moves({"seed": 5}, seed=2)
    assert moves({}, seed=1) == moves({}, seed=1)


def test_greedy_refuses_an_unknown_game(start) -> None:
    bot = start(PYTHON_BOTS["-m bots.greedy"])
    bot.send(hello("chess"))
    answer = bot.read()
    assert answer["type"] == "error"
    assert "chess" in answer["message"]


# --- the greedy policy on hand-built positions -------------------------------


def oxono_state(pieces: dict[str, str], totems: dict[str, str], to_move: str) -> Any:
    """An OXONO state from a square -> cell map (``"PX"``, ``"BO"``...); reserves
    and ply follow from the pieces on the board."""
    board = [["" for _ in range(6)] for _ in range(6)]
    for square, cell in {**pieces, **{sq: "T" + t for t, sq in totems.items()}}.items():
        board[int(square[1]) - 1][ord(square[0]) - ord("a")] = cell
    reserve = {
        colour: {symbol: 8 - sum(cell == letter + symbol for cell in pieces.values()) for symbol in "XO"}
        for colour, letter in (("pink", "P"), ("black", "B"))
    }
    data = {"board": board, "to_move": to_move, "ply": len(pieces), "totems": totems, "reserve": reserve}
    return engine.get_game("oxono").from_json(data)


def winner_after(game: engine.Game[Any], state: Any, move: str) -> int | None:
    outcome = game.outcome(game.apply(state, move))
    return None if outcome is None else outcome.winner


def opponent_can_win(game: engine.Game[Any], state: Any, move: str) -> bool:
    after = game.apply(state, move)
    them = game.to_move(after)
    return not game.is_over(after) and any(winner_after(game, after, reply) == them for reply in game.legal_moves(after))


def test_greedy_takes_a_win_in_one() -> None:
    game = engine.get_game("oxono")
    # Pink has three X in a row on rank 1; the X totem can slide to d2 and place on d1.
    state = oxono_state(
        {"a1": "PX", "b1": "PX", "c1": "PX", "f4": "BO", "f5": "BX", "a5": "BO"},
        {"X": "d3", "O": "e5"},
        "pink",
    )
    moves = game.legal_moves(state)
    wins = [move for move in moves if winner_after(game, state, move) == 0]
    # Few wins among many moves, so a random pick would miss them.
    assert 0 < len(wins) <= len(moves) // 10
    for seed in range(5):
        assert choose_move(game, state, moves, random.Random(seed)) in wins


def test_greedy_avoids_giving_the_opponent_a_win_in_one() -> None:
    game = engine.get_game("oxono")
    # Black threatens d6 (three black pieces on rank 6); pink has no win of its own.
    state = oxono_state(
        {"a6": "BX", "b6": "BO", "c6": "BX", "a1": "PX", "c1": "PO", "f2": "PX"},
        {"X": "d4", "O": "e4"},
        "pink",
    )
    moves = game.legal_moves(state)
    assert not any(winner_after(game, state, move) == 0 for move in moves)
    safe = [move for move in moves if not opponent_can_win(game, state, move)]
    assert 0 < len(safe) <= len(moves) // 2
    for seed in range(5):
        assert choose_move(game, state, moves, random.Random(seed)) in safe


def yoxii_state(cells: dict[str, str], to_move: str) -> Any:
    """A YOXII state from a square -> cell map (``"T"``, ``"W3"``, ``"R1"``...);
    reserves and ply follow from the pieces on the board."""
    board = [["" for _ in range(7)] for _ in range(7)]
    for rank, row in enumerate(board):
        for file in range(7):
            # The three squares cut from each corner: the corner and its two orthogonal neighbours.
            if min(rank, 6 - rank) + min(file, 6 - file) < 2:
                row[file] = "#"
    for square, cell in cells.items():
        board[int(square[1]) - 1][ord(square[0]) - ord("a")] = cell
    full = {"1": 5, "2": 5, "3": 5, "4": 3}
    reserve = {
        colour: {value: count - sum(cell == letter + value for cell in cells.values()) for value, count in full.items()}
        for colour, letter in (("white", "W"), ("red", "R"))
    }
    totem = next(square for square, cell in cells.items() if cell == "T")
    data = {"board": board, "to_move": to_move, "ply": len(cells) - 1, "totem": totem, "reserve": reserve}
    return engine.get_game("yoxii").from_json(data)


def test_greedy_takes_a_yoxii_win_that_ends_the_game() -> None:
    game = engine.get_game("yoxii")
    # Found by a seeded random playout: a few of white's moves block red's totem with white ahead.
    state = yoxii_state(
        {"d2": "R1", "f2": "R1", "d3": "W3", "e3": "T", "c4": "R4", "d4": "R4", "e4": "W3", "f4": "W4",
         "g4": "R2", "c5": "R4", "e5": "W3", "f5": "W4", "f6": "W2", "c7": "W4", "e7": "R1"},
        "white",
    )
    moves = game.legal_moves(state)
    wins = [move for move in moves if winner_after(game, state, move) == 0]
    assert 0 < len(wins) <= len(moves) // 10
    for seed in range(5):
        assert choose_move(game, state, moves, random.Random(seed)) in wins


def test_greedy_in_yoxii_prefers_a_threat_to_a_loss_at_once() -> None:
    game = engine.get_game("yoxii")
    # White cannot win now nor avoid a winning reply; most moves even lose at once.
    state = yoxii_state(
        {"d1": "R3", "b2": "W2", "c2": "R4", "d2": "W3", "f2": "W3", "a3": "R2", "b3": "W2", "c3": "T",
         "d3": "R3", "e3": "R2", "f3": "R2", "g3": "W4", "a4": "R1", "b4": "W4", "c4": "W1", "d4": "W3",
         "e4": "W3", "f4": "W2", "g4": "R3", "a5": "W1", "b5": "R4", "c5": "W1", "d5": "R4", "e5": "W1",
         "f5": "W3", "g5": "R2", "b6": "R2", "c6": "W4", "d6": "R1", "e6": "W2", "f6": "R1", "d7": "R3",
         "e7": "R3"},
        "white",
    )
    moves = game.legal_moves(state)
    assert all(opponent_can_win(game, state, move) or game.is_over(game.apply(state, move)) for move in moves)
    losing = [move for move in moves if winner_after(game, state, move) == 1]
    survive = [move for move in moves if move not in losing]
    assert 0 < len(survive) < len(losing)
    for seed in range(5):
        assert choose_move(game, state, moves, random.Random(seed)) in survive


# --- the random bot quoted in the guide, and the guide's examples -------------


def guide_blocks(language: str) -> list[str]:
    """The fenced code blocks of docs/protocol.md tagged ``language`` ("" for untagged)."""
    blocks: list[str] = []
    current: list[str] | None = None
    tag = ""
    for line in (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, tag = [], line[3:].strip()
            else:
                if tag == language:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_random_bot_uses_only_the_standard_library() -> None:
    source = (BOTS / "random_bot.py").read_text(encoding="utf-8")
    imported = set(re.findall(r"^(?:import|from) (\w+)", source, flags=re.MULTILINE))
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


def test_protocol_guide_start_states_are_the_engines() -> None:
    states = [json.loads(block) for block in guide_blocks("json") if block.startswith('{"board"')]
    oxono, yoxii = engine.get_game("oxono"), engine.get_game("yoxii")
    assert states == [oxono.to_json(oxono.new_state(opening=0)), yoxii.to_json(yoxii.new_state())]


def test_protocol_guide_transcript_replays_in_the_engine() -> None:
    (transcript,) = [block for block in guide_blocks("") if block.startswith("> {")]
    lines = [(line[0], json.loads(line[2:])) for line in transcript.splitlines()]
    game = engine.get_game("oxono")
    state, moves = None, []
    for side, message in lines:
        kind = message["type"]
        if kind == "new_game":
            state = game.from_json(message["state"])
            moves = []
        elif kind == "turn":
            assert side == ">" and state is not None
            # The opponent's move is the one the turn names, played on the position so far.
            if message["last_move"] is not None:
                state = game.apply(state, message["last_move"])
                moves.append(message["last_move"])
            assert message["state"] == game.to_json(state)
            assert message["legal_moves"] == game.legal_moves(state)
        elif kind == "move":
            assert side == "<" and state is not None
            state = game.apply(state, message["move"])
            moves.append(message["move"])
        elif kind == "game_over":
            outcome = game.outcome(state)
            assert outcome is not None
            assert message["moves"] == moves
            assert (message["winner"], message["reason"]) == (game.colors[outcome.winner], outcome.reason)
    assert [message["type"] for _, message in lines[-2:]] == ["game_over", "quit"]


def test_protocol_guide_quotes_the_random_bot_whole() -> None:
    assert (BOTS / "random_bot.py").read_text(encoding="utf-8") in guide_blocks("python")
