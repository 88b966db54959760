"""The first read of a long log on two cores (arena.results.judged_lines):
a forked child judges the lines, this process folds them; everything the
read in one process says, it says the same, to the line numbers."""

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from arena.base.processes import children
from arena.results import judged_lines
from arena.results.game_index import INDEX_FILE
from arena.results.store import GAMES_FILE, ResultsStore
from arena.run.standings_read import read_standings
from builders import running, tournament, until
from test_game_index import write_games
from test_standings_read import shown


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 30\n", name="forked", seed=3, output="out")


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """The children forked to judge lines (their pids), counted."""
    forked: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(judged_lines.os, "fork", fork)
    return forked


def read_with(directory, monkeypatch, fork_bytes: int) -> tuple[list[str], object, list[tuple], list[tuple]]:
    """What a first read of ``directory`` (its index deleted) says, with logs
    of ``fork_bytes`` or more judged by a child: the standings, the read
    of the log, and the index it leaves."""
    for index in directory.glob(f"{INDEX_FILE}*"):
        index.unlink()
    with monkeypatch.context() as patched:
        patched.setattr(judged_lines, "FORK_BYTES", fork_bytes)
        said = shown(read_standings(directory))
        for index in directory.glob(f"{INDEX_FILE}*"):
            index.unlink()
        loaded = ResultsStore(directory).load("oxono")
    with sqlite3.connect(directory / INDEX_FILE) as db:
        rows = db.execute("SELECT * FROM lines ORDER BY offset").fetchall()
        state = db.execute("SELECT * FROM state ORDER BY key").fetchall()
    read = ([r.game_id for r in loaded.records], loaded.warnings, loaded.good_bytes, loaded.place, loaded.torn)
    return said, read, rows, state


def messy_log(config) -> list[int]:
    """60 games with lines of every kind among them, the late ones where a
    second half would be: the line numbers of the bad line and of the
    second record of a game, which the read must name."""
    write_games(config, 60)
    log = config.output / GAMES_FILE
    lines = log.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[1])
    lines[3:3] = [b"\n", b"not a record\n"]  # early
    lines[50:50] = [b'{"game_id": 7}\n']  # late: the bad line, line 51
    lines[55:55] = [json.dumps(first).encode() + b"\n"]  # late: a second record of an early game, line 56
    other = dict(json.loads(lines[40]), game="yoxii")
    lines[58:58] = [json.dumps(other).encode() + b"\n"]
    log.write_bytes(b"".join(lines) + b'{"torn')
    return [51, 56]


def test_a_forked_read_says_what_a_read_in_one_process_says_to_the_index_it_leaves(config, monkeypatch, forks):
    bad, second = messy_log(config)
    alone = read_with(config.output, monkeypatch, 1 << 60)
    assert not forks
    forked = read_with(config.output, monkeypatch, 0)
    assert len(forks) == 2  # (the standings' read and the store's)
    assert forked == alone
    warnings = "\n".join(forked[1][1])
    assert f"{GAMES_FILE}:{bad}: skipped an unreadable record" in warnings
    assert f"{GAMES_FILE}:{second}: skipped a second record of game" in warnings
    assert "of another game ('yoxii')" in warnings and "torn last line" in warnings
    assert forked[3] and forked[1][3].offset == forked[1][2] == dict(forked[3])["covered"]


def test_a_forked_read_of_a_log_the_index_covers_in_part_reads_on_from_there(config, monkeypatch, forks):
    write_games(config, 40)
    alone = read_with(config.output, monkeypatch, 1 << 60)
    write_games(config, 20, start=40)
    with monkeypatch.context() as patched:
        patched.setattr(judged_lines, "FORK_BYTES", 0)
        for index in config.output.glob(f"{INDEX_FILE}*"):
            index.unlink()
        ResultsStore(config.output).load("oxono")  # the index covers 60 games
        write_games(config, 20, start=60)
        loaded = ResultsStore(config.output).load("oxono")  # the child judges the last 20 only
    assert [r.game_id for r in loaded.records][:40] == alone[1][0]
    assert len(loaded.records) == 80 and loaded.place.lines == 80 and len(forks) == 2
    assert read_with(config.output, monkeypatch, 0) == read_with(config.output, monkeypatch, 1 << 60)


def test_a_child_that_dies_leaves_the_rest_of_the_lines_to_the_reader(config, monkeypatch, forks):
    bad, _ = messy_log(config)
    alone = read_with(config.output, monkeypatch, 1 << 60)
    reader = os.getpid()
    judge = ResultsStore._judge

    def dying(self, line):
        if os.getpid() != reader and line.number == 30:
            os._exit(3)  # (killed midway, in the child only)
        return judge(self, line)

    monkeypatch.setattr(ResultsStore, "_judge", dying)
    forked = read_with(config.output, monkeypatch, 0)
    assert forks and forked == alone
    assert f"{GAMES_FILE}:{bad}: skipped an unreadable record" in "\n".join(forked[1][1])


def test_a_reader_that_cannot_fork_reads_alone(config, monkeypatch):
    messy_log(config)
    alone = read_with(config.output, monkeypatch, 1 << 60)

    def fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(judged_lines.os, "fork", fork)
    assert read_with(config.output, monkeypatch, 0) == alone


def test_a_reader_that_stops_early_ends_its_child(config, monkeypatch, forks):
    write_games(config, 60)
    monkeypatch.setattr(judged_lines, "FORK_BYTES", 0)

    def refuse(record):
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        ResultsStore(config.output).load("oxono", into=refuse)
    assert len(forks) == 1
    with pytest.raises(ChildProcessError):  # reaped already
        os.waitpid(forks[0], os.WNOHANG)


def test_a_short_log_or_a_reader_of_several_threads_forks_no_child(config, monkeypatch, forks):
    write_games(config, 30)
    ResultsStore(config.output).load("oxono")  # (a log far below FORK_BYTES)
    for index in config.output.glob(f"{INDEX_FILE}*"):
        index.unlink()
    monkeypatch.setattr(judged_lines, "FORK_BYTES", 0)
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        assert len(ResultsStore(config.output).load("oxono").records) == 30
    finally:
        done.set()
        other.join()
    assert not forks


def test_the_child_dies_with_a_reader_killed_by_kill_9(config):
    write_games(config, 60)
    code = ("import sys, time\nfrom pathlib import Path\n"
            "from arena.results import judged_lines, store\njudged_lines.FORK_BYTES = 0\n"
            "class Slow(store.ResultsStore):\n"
            "    def _judge(self, line):\n"
            "        time.sleep(0.5)\n"  # (the child too: it lives until its reader is killed)
            "        return super()._judge(line)\n"
            "Slow(Path(sys.argv[1])).load()\n")
    reader = subprocess.Popen([sys.executable, "-c", code, str(config.output)], env={**os.environ, "PYTHONPATH": ":".join(sys.path)})
    try:
        child = until(lambda: children(reader.pid), 60, "the reader forked its child", every=0.05)[0]
    finally:
        reader.kill()
        reader.wait()
    until(lambda: not running(child), 10, "the child died with its reader", every=0.05)
