"""``arena play``: a person against a bot, driven from a pipe as a person
would type (a real ``arena`` process), and by a pseudo-terminal for colour."""

from __future__ import annotations

import json
import os
import pty
import random
import re
import select
import subprocess
import sys
import threading
import time

import pytest

import engine
from arena.game.records import GameRecord
from arena.play import closest_moves, describe_info, render_position
from builders import ROOT, replayed

PROMPT = "to move> "
TIMEOUT_S = 60.0  # generous: the machine may be busy

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


class Session:
    """``arena play`` with its stdin and stdout on pipes; reads up to each prompt."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "play", *args], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": ""},
        )
        self.text = ""
        self._seen = 0
        self._lock = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        while chunk := os.read(self.process.stdout.fileno(), 4096):
            with self._lock:
                self.text += chunk.decode()
                self._lock.notify_all()
        with self._lock:
            self.text += "\0"  # end of output
            self._lock.notify_all()

    def until(self, *needles: str) -> str:
        """Output since the last call, up to the first of ``needles`` (or the end)."""
        deadline = time.monotonic() + TIMEOUT_S
        with self._lock:
            while True:
                fresh = self.text[self._seen:]
                hits = [fresh.index(n) + len(n) for n in needles if n in fresh]
                if hits or "\0" in fresh:
                    end = min(hits) if hits else len(fresh)
                    self._seen += end
                    return fresh[:end]
                if not self._lock.wait(timeout=max(0.0, deadline - time.monotonic())):
                    pytest.fail(f"no {needles!r} within {TIMEOUT_S} s; output:\n{self.text[-2000:]}")

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def legal_moves(self) -> list[str]:
        self.send("?")
        listed = self.until(PROMPT)
        match = re.search(r"\d+ legal moves: (.*)", listed)
        assert match, listed
        return match.group(1).split(", ")

    def finish(self) -> tuple[int, str]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=TIMEOUT_S)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode()


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_a_whole_game_from_a_pipe_is_saved_as_a_record(game, tmp_path):
    save = tmp_path / "games.jsonl"
    session = Session("--game", game, "--bot", "python -m bots.random_bot", "--tc", "600+5", "--save", str(save))
    rng = random.Random(1)
    first = session.until(PROMPT)
    assert "you play" in first and "clock 10:00.0" in first
    assert "at 600+5 (another clock: --tc, e.g. --tc 60+1)." in first  # (the clock said, and how to change it)
    while True:
        session.send(rng.choice(session.legal_moves()))
        shown = session.until(PROMPT, "game over")
        if "game over" in shown:
            break
        assert "RandomBot plays" in shown
    code, err = session.finish()
    assert code == 0, err
    record = GameRecord.from_json(json.loads(save.read_text()))
    assert record.players[engine.get_game(game).colors[0]] == "you"
    # The record replays to the result it states.
    g, state = replayed(record)
    outcome = g.outcome(state)
    assert outcome is not None and record.reason == outcome.reason
    assert record.winner == (None if outcome.winner is None else g.colors[outcome.winner])


def test_an_illegal_move_is_explained_and_the_prompt_comes_back(tmp_path):
    session = Session("--game", "oxono", "--bot", "python -m bots.greedy", "--seed", "0")
    session.until(PROMPT)
    session.send("Xd3 c4")
    answer = session.until(PROMPT)
    assert "illegal: 'Xd3 c4': the piece must go on an empty square next to totem X on d3" in answer
    closest = re.search(r"closest legal moves: (.*?)   ", answer).group(1).split(", ")
    assert "Xd3 c3" in closest and len(closest) == 5
    session.send("xd3  D2")  # case and spacing are forgiven
    assert "Greedy plays" in session.until(PROMPT)
    session.send("quit")
    assert "Greedy wins (resign" in session.until("\0")
    assert session.finish()[0] == 0


def test_undo_takes_back_a_pair_and_tells_the_bot(tmp_path):
    log = tmp_path / "bot.log"
    save = tmp_path / "g.jsonl"
    session = Session("--game", "yoxii", "--bot", "python tests/bots/echo_bot.py", "--color", "red",
                      "--log", str(log), "--save", str(save))
    assert "test-bot plays" in session.until(PROMPT)  # the bot opens as white
    session.send("undo")
    assert "nothing to undo" in session.until(PROMPT)
    mine = session.legal_moves()[0]
    session.send(mine)
    session.until(PROMPT)
    session.send("undo")
    assert "took back 2 moves" in session.until(PROMPT)
    session.send("quit")
    session.until("\0")
    assert session.finish()[0] == 0
    new_games = [json.loads(line[5:]) for line in log.read_text().splitlines() if '"new_game"' in line]
    assert [len(m["opening_moves"]) for m in new_games] == [0, 1]
    white_first = json.loads(save.read_text())["moves"][0]["move"]
    assert new_games[1]["opening_moves"] == [white_first]
    # The position sent after the undo is the one after the bot's first move.
    yoxii = engine.get_game("yoxii")
    assert new_games[1]["state"] == yoxii.to_json(yoxii.apply(yoxii.new_state(), white_first))
    saved = json.loads(save.read_text())
    assert len(saved["moves"]) == 1
    assert list(saved["players"].items()) == [("white", "test-bot"), ("red", "you")]  # seat order


def test_colour_on_a_terminal_and_plain_text_in_a_pipe():
    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--bot", "python -m bots.random_bot"],
        cwd=ROOT, stdin=child, stdout=child, stderr=child, env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
    )
    os.close(child)
    os.write(main, b"quit\n")
    output = b""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=TIMEOUT_S)
    os.close(main)
    text = output.decode()
    assert "\x1b[1;30;43mTX\x1b[0m" in text  # the totem, highlighted
    assert "game over" in text

    piped = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--bot", "python -m bots.random_bot"],
        cwd=ROOT, input="quit\n", capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert piped.returncode == 0 and "TX" in piped.stdout and "\x1b[" not in piped.stdout


def test_a_bot_that_cannot_start_is_one_line():
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--bot", "no-such-program-8"],
        cwd=ROOT, input="", capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "the bot could not start" in result.stderr
    bad_colour = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--bot", "python -m bots.random_bot", "--color", "blue"],
        cwd=ROOT, input="", capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert bad_colour.returncode == 2 and "pink or black" in bad_colour.stderr
    unwritable = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--bot", "python -m bots.random_bot", "--save", "/proc/no/games.jsonl"],
        cwd=ROOT, input="", capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert unwritable.returncode == 2 and unwritable.stderr.count("\n") == 1
    assert "cannot save the game to /proc/no/games.jsonl" in unwritable.stderr
    assert unwritable.stdout == ""  # refused before the game began


# -- the pieces, in-process -------------------------------------------------------


def test_helpers():
    oxono = engine.get_game("oxono")
    assert oxono.normalise_move(" xc5   C6 ") == "Xc5 c6"
    assert engine.get_game("yoxii").normalise_move("D5 3E6") == "d5 3e6"
    assert closest_moves("Xc5 c7", ["Od1 d2", "Xc5 c6", "Xc5 b5"], 2) == ["Xc5 c6", "Xc5 b5"]
    # Control characters from a bot never reach the terminal: shown escaped (as everywhere else), not raw.
    assert describe_info({"score": 3, "pv": ["a\x1b[2J", "b"], "junk": 1}) == "score 3, pv a\\x1b[2J b"
    assert describe_info({"score": "\x9b" + "9" * 300}) == "score \\x9b" + "9" * 116 + "..."
    state = oxono.apply(oxono.new_state(opening=0), "Xc5 c6")
    board = render_position(oxono, state, "Xc5 c6", names={"pink": "you", "black": "bot"}, clocks={"pink": 61500, "black": 5})
    assert "[TX]" in board and "[PX]" in board and "clock 1:01.5" in board and "clock 0:00.0" in board
    assert "reserve X:7 O:8" in board and "black (bot) to move" in board
