"""The index of games.jsonl: derived, caught up, rebuilt; every reader gives
the same answer with it, without it, and after it was damaged."""

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.formats.schedule import make_schedule
from arena.live import state as live_state
from arena.live.state import LiveState
from arena.results import store as store_module
from arena.results.game_index import INDEX_FILE, INDEX_VERSION, LazyMoves
from arena.results.seals import user_key
from arena.results.store import ResultsStore
from arena.run.results_dir import RunPlan, open_results, read_results
from builders import arena, tournament
from played_games import played_games

DOCS = Path(__file__).resolve().parent.parent / "docs" / "tournaments.md"


def write_games(config, count: int, start: int = 0) -> list:
    """``count`` real games (random moves, forfeits among them) rewritten
    onto the tournament's schedule from game ``start``, appended as a run does."""
    schedule = make_schedule(config.competition)[start:start + count]
    pool = played_games("oxono", ["x", "y"], 40, seed=5, forfeit_every=7)
    records = [dataclasses.replace(pool[spec.index % len(pool)], game_id=spec.game_id, index=spec.index,
                                   players=dict(zip(("pink", "black"), spec.players)), round=spec.round,
                                   pair=spec.pair, seed=spec.seed, opening=spec.opening) for spec in schedule]
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for record in records:
            store.append(record)
    return records


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("ann", "bob", "cy", "dee"), "rounds: 30\n", name="index-test", seed=3, output="out")


def answers(directory) -> dict[str, str]:
    """What the readers say of ``directory``: the standings in every form,
    one game shown, one bot's grade sheet and the report (its time stamp aside)."""
    said = {form: arena("standings", directory, "-f", form).out for form in ("plain", "json", "csv")}
    said["forfeits"] = arena("standings", directory, "--forfeits").out
    said["sheet"] = arena("report", directory, "--bot", "ann", "-f", "md").out
    report = directory.parent / "report.html"
    arena("report", directory, "-o", report)
    said["report"] = re.sub(r"written [0-9T:.+\- ]+", "", report.read_text())
    said["serve"] = LiveState(directory).page().decode()
    latest, live_state.LATEST_GAMES = live_state.LATEST_GAMES, 20  # (the page of a large directory: its latest games)
    try:
        said["serve, the latest games"] = LiveState(directory).page().decode()
    finally:
        live_state.LATEST_GAMES = latest
    return said


def test_every_reader_says_the_same_with_the_index_without_it_and_rebuilt(config):
    records = write_games(config, 60)
    index = config.output / INDEX_FILE
    first = answers(config.output)  # builds it
    assert index.is_file()
    assert answers(config.output) == first  # reads it
    index.unlink()
    assert answers(config.output) == first  # builds it again
    os.mkfifo(config.output / "fifo")
    index.unlink()
    os.rename(config.output / "fifo", index)  # unusable: the log is read as it is
    assert answers(config.output) == first
    assert '"games": 60' in first["json"] or len(records) == 60


def test_the_index_catches_up_with_new_games_and_holds_one_entry_a_line(config):
    write_games(config, 20)
    assert len(ResultsStore(config.output).load().records) == 20
    write_games(config, 15, start=20)
    loaded = ResultsStore(config.output).load()
    assert [r.index for r in loaded.records] == list(range(35)) and loaded.warnings == []
    with sqlite3.connect(config.output / INDEX_FILE) as db:
        assert db.execute("SELECT count(*) FROM lines").fetchone() == (35,)
        covered = dict(db.execute("SELECT key, value FROM state"))["covered"]
    assert covered == (config.output / "games.jsonl").stat().st_size


def test_moves_are_read_from_the_log_by_offset_even_after_a_replay_moved_them(config):
    records = write_games(config, 12)
    loaded = ResultsStore(config.output).load().records
    assert all(isinstance(r.moves, LazyMoves) for r in loaded)
    assert [len(r.moves) for r in loaded] == [len(r.moves) for r in records]
    with ResultsStore(config.output) as store:
        store.open_for_run("oxono")
        store.start_appending(store.load("oxono"))
        store.replace({records[0].game_id: "--replay ann"})  # every later line moves up
    assert [r.to_json() for r in loaded[1:]] == [r.to_json() for r in records[1:]]
    again = ResultsStore(config.output).load()
    assert [r.game_id for r in again.records] == [r.game_id for r in records[1:]] and again.warnings == []


def rebuilt_line(warnings: list[str]) -> list[str]:
    return [w for w in warnings if INDEX_FILE in w]


@pytest.mark.parametrize("damage", ["garbage", "old version", "forged entry", "truncated"])
def test_a_damaged_or_old_index_is_rebuilt_with_one_line_saying_so(config, damage):
    write_games(config, 30)
    want = ResultsStore(config.output).load()
    path = config.output / INDEX_FILE
    if damage == "garbage":
        path.write_bytes(b"not an index at all" * 100)
    elif damage == "truncated":
        with open(path, "r+b") as handle:
            handle.truncate(path.stat().st_size // 3)
    else:
        with sqlite3.connect(path) as db:
            if damage == "old version":
                db.execute("UPDATE state SET value = ? WHERE key = 'version'", (INDEX_VERSION - 1,))
            else:  # a winner no record can have
                db.execute("UPDATE lines SET record = replace(record, '\"winner\":\"pink\"', '\"winner\":\"nobody\"')")
    loaded = ResultsStore(config.output).load()
    assert [r.to_json() for r in loaded.records] == [r.to_json() for r in want.records]
    line, = rebuilt_line(loaded.warnings)
    assert line.startswith(f"{path}: rebuilt from games.jsonl, as ")
    assert ("another version" in line) if damage == "old version" else ("damaged" in line), line
    if damage == "old version":  # as docs/tournaments.md quotes it
        quoted = re.search(r"^  (warning: results/demo/index.sqlite: .*)$", DOCS.read_text(), re.M)[1]
        assert f"warning: {line}" == quoted.replace("results/demo", str(config.output))
    again = ResultsStore(config.output).load()
    assert rebuilt_line(again.warnings) == [] and len(again.records) == 30


def test_a_rewritten_or_torn_log_is_read_as_it_is_now(config):
    write_games(config, 30)
    ResultsStore(config.output).load()
    games = config.output / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    edited = json.loads(lines[4])
    edited["winner"], edited["reason"] = None, "exhausted"
    lines[4] = (json.dumps(edited) + "\n").encode()
    games.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # an edited line, a torn last one, a new inode
    loaded = ResultsStore(config.output).load()
    assert len(loaded.records) == 29 and loaded.records[4].winner is None
    assert rebuilt_line(loaded.warnings) == [] and "torn last line" in loaded.warnings[-1]
    os.truncate(games, sum(map(len, lines[:10])))  # cut in place, the same inode
    assert len(ResultsStore(config.output).load().records) == 10


@pytest.mark.parametrize("fork_bytes", [1 << 60, 0], ids=["alone", "with a child judging the lines"])
def test_kill_9_while_the_index_is_built_loses_nothing(config, fork_bytes):
    """A reader killed at any instant of building the index: the next one
    reads every game, as from the log alone."""
    write_games(config, 240)
    want = [r.to_json() for r in ResultsStore(config.output).load().records]
    code = (f"import os, sys\nsys.path[:0] = {sys.path!r}\n"
            f"from arena.results import judged_lines, store\nstore.INDEX_BATCH = 3\njudged_lines.FORK_BYTES = {fork_bytes}\n"
            "while True:\n"
            "    os.unlink(os.path.join(sys.argv[1], 'index.sqlite'))\n"
            "    store.ResultsStore(sys.argv[1]).load()\n")
    for delay in (0.15, 0.3, 0.45, 0.6, 0.8):
        builder = subprocess.Popen([sys.executable, "-c", code, str(config.output)], stderr=subprocess.PIPE)
        time.sleep(delay)
        builder.send_signal(signal.SIGKILL)
        builder.wait()
        loaded = ResultsStore(config.output).load()
        assert [r.to_json() for r in loaded.records] == want, delay
        assert [w for w in loaded.warnings if "damaged" in w] == []


def test_reading_a_directory_the_reader_cannot_write_uses_the_log(config, monkeypatch):
    write_games(config, 10)
    monkeypatch.setattr(store_module.GameIndex, "open", lambda self, fd: (_ for _ in ()).throw(
        store_module.IndexUnusable("read-only file system")))
    loaded = ResultsStore(config.output).load()
    assert len(loaded.records) == 10 and loaded.warnings == []
    assert not (config.output / INDEX_FILE).exists()
    assert read_results(config.output).standings().total_games == 10


def test_records_sealed_by_this_user_read_as_those_checked_and_a_foreign_seal_is_checked(config, monkeypatch, tmp_path):
    write_games(config, 25)
    sealed = ResultsStore(config.output).load()  # built, its entries sealed with this user's key
    assert user_key() is not None
    with sqlite3.connect(config.output / INDEX_FILE) as db:
        assert db.execute("SELECT count(*) FROM lines WHERE seal IS NULL").fetchone() == (0,)
    read_sealed = ResultsStore(config.output).load()
    monkeypatch.setenv("TOTEM_ARENA_CACHE", str(tmp_path / "another-user"))  # another key: every entry is checked
    assert user_key() is not None
    read_checked = ResultsStore(config.output).load()
    monkeypatch.setenv("TOTEM_ARENA_CACHE", "off")  # no key at all
    read_keyless = ResultsStore(config.output).load()
    want = [r.to_json() for r in sealed.records]
    assert [r.to_json() for r in read_sealed.records] == want
    assert [r.to_json() for r in read_checked.records] == want == [r.to_json() for r in read_keyless.records]


def test_a_sealed_entry_is_read_back_as_written_whatever_its_fields_hold(config):
    records = write_games(config, 12)
    with ResultsStore(config.output) as store:  # fields msgspec's types do not take are read by Python's parser
        store.start_appending(store.open_for_run("oxono"))
        for record, scores in zip(make_schedule(config.competition)[12:15], ({"pink": 1.5, "black": 2}, {"pink": 3})):
            store.append(dataclasses.replace(records[0], game_id=record.game_id, index=record.index, scores=scores))
    first = ResultsStore(config.output).load()
    again = ResultsStore(config.output).load()  # from the entries the first read sealed
    assert len(again.records) == 14 and again.warnings == first.warnings == []
    assert [json.dumps(r.to_json()) for r in again.records] == [json.dumps(r.to_json()) for r in first.records]
    assert [r.moves.times for r in again.records] == [r.moves.times for r in first.records]


def test_an_entry_whose_seal_is_not_its_own_is_checked_and_refused_when_wrong(config):
    write_games(config, 10)
    ResultsStore(config.output).load()
    with sqlite3.connect(config.output / INDEX_FILE) as db:  # an edit that keeps the old seal: it no longer fits
        db.execute("UPDATE lines SET record = replace(record, '\"reason\":\"', '\"reason\":\"x') WHERE number = 3")
    loaded = ResultsStore(config.output).load()
    assert len(loaded.records) == 10 and "damaged" in rebuilt_line(loaded.warnings)[0]


def test_the_key_is_this_users_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("TOTEM_ARENA_CACHE", str(tmp_path / "cache"))
    key = user_key()
    path = tmp_path / "cache" / "index.key"
    assert len(key) == 32 and path.stat().st_mode & 0o777 == 0o600 and user_key() == key
    path.chmod(0o644)  # readable by others: anyone could seal
    assert user_key() is None


def test_a_reader_of_a_log_rewritten_meanwhile_reads_the_log_it_opened(config):
    """A --replay rewrites games.jsonl (a new file) while another command is
    reading the old one: the index, made over the new file by then, is not
    mixed into that reader's answer."""
    records = write_games(config, 12)
    store = ResultsStore(config.output)
    store.load()
    fd = os.open(config.output / "games.jsonl", os.O_RDONLY)  # the reader's log
    try:
        with ResultsStore(config.output) as writer:
            writer.open_for_run("oxono")
            writer.start_appending(writer.load("oxono"))
            writer.replace({records[0].game_id: "--replay ann"})
        assert len(ResultsStore(config.output).load().records) == 11  # the index is the new log's
        old = store._load(fd, None)
    finally:
        os.close(fd)
    assert [r.game_id for r in old.records] == [r.game_id for r in records] and old.warnings == []


def test_a_replay_says_where_each_record_left_now_is(config):
    records = write_games(config, 8)
    with ResultsStore(config.output) as store:
        store.open_for_run("oxono")
        store.start_appending(store.load("oxono"))
        placed = store.replace({records[2].game_id: "--replay ann"})
    data = (config.output / "games.jsonl").read_bytes()
    assert sorted(placed) == sorted(r.game_id for r in records if r is not records[2])
    for game_id, (offset, length) in placed.items():
        assert json.loads(data[offset:offset + length])["game_id"] == game_id and data[offset + length:offset + length + 1] == b"\n"


def test_the_game_a_record_is_of_is_the_records_not_the_indexs(config):
    """The index's own column naming a line's game is not sealed: a record of
    another game is still known by what the record says."""
    write_games(config, 6)
    yoxii = played_games("yoxii", ["x", "y"], 1, seed=2)[0]
    with open(config.output / "games.jsonl", "ab") as log:
        log.write(yoxii.to_line())
    want = ResultsStore(config.output).load("oxono")
    assert len(want.records) == 6 and "another game ('yoxii')" in want.warnings[-1]
    with sqlite3.connect(config.output / INDEX_FILE) as db:
        db.execute("UPDATE lines SET game = NULL")
    loaded = ResultsStore(config.output).load("oxono")
    assert [r.game_id for r in loaded.records] == [r.game_id for r in want.records] and loaded.warnings == want.warnings


def test_an_entry_sealed_with_this_users_key_that_is_no_record_rebuilds_the_index(config):
    from arena.results.game_index import _SEALED_ENTRY
    from arena.results.seals import seal

    written = write_games(config, 10)
    ResultsStore(config.output).load()
    with sqlite3.connect(config.output / INDEX_FILE) as db:  # sealed anew, as only this user's arena can
        entry = db.execute("SELECT record FROM lines WHERE number = 3").fetchone()[0].replace('"round":', '"round":"x",'
                                                                                              '"was":', 1)
        db.execute("UPDATE lines SET record = ?, seal = ? WHERE number = 3",
                   (entry, seal(user_key(), entry.encode(), _SEALED_ENTRY)))
    loaded = ResultsStore(config.output).load()
    assert "damaged" in rebuilt_line(loaded.warnings)[0]
    assert [r.to_json() for r in loaded.records] == [r.to_json() for r in written]


def test_the_index_holds_what_a_resume_sorts_each_game_by(config):
    """Beside each record, what a resume sorts it by without making it
    (:meth:`GameIndex.games`): its id, seed, players in seat order, game,
    opening and forfeit's reason, and versions in seat order; None for a
    line that is no record."""
    from arena.base import safe_files
    from arena.results.game_index import GameIndex

    records = write_games(config, 12)
    with open(config.output / "games.jsonl", "ab") as log:
        log.write(b"not a record\n")
    ResultsStore(config.output).load()
    fd = safe_files.open_file(config.output, "games.jsonl", os.O_RDONLY)
    index = GameIndex(config.output)
    try:
        rows = list(index.games(fd, index.open(fd)))
        assert index.entry(rows[3][1]).record is not None and index.entry(rows[-1][1]).problem
    finally:
        index.close()
        os.close(fd)
    assert rows[-1][2:] == (None,) * 5 and [row[0] for row in rows] == list(range(1, 14))
    for record, row in zip(records, rows):
        reason = record.reason if record.forfeit_by is not None else None
        versions = None if record.versions is None else [record.versions[c] for c in record.players]
        assert row[2:4] == (record.game_id, record.seed)
        assert [json.loads(text) if text is not None else None for text in row[4:]] == [
            list(record.players.values()), [record.game, record.opening, list(record.opening_moves), reason], versions]
    assert any(json.loads(row[5])[3] for row in rows[:12])  # (a forfeit among them)
