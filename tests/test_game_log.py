"""games.jsonl as a stream: every line with its offset, whatever the file's
size, never the file (nor a size limit) in memory."""

import json
import os
import resource
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from arena.formats.schedule import make_schedule
from arena.results import game_log, store as store_module
from arena.results.game_log import LogLines
from arena.results.store import ResultsStore
from arena.run.results_dir import RunPlan, open_results
from builders import record_for, tournament


def lines_of(data: bytes, tmp_path, max_line: int = 1 << 20) -> tuple[list[tuple[int, int, bytes | None, int]], LogLines]:
    path = tmp_path / "log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = LogLines(fd, max_line)
        return [(line.number, line.offset, line.data, line.length) for line in lines], lines
    finally:
        os.close(fd)


def expected_lines(data: bytes, max_line: int) -> tuple[list[tuple[int, int, bytes | None, int]], int]:
    """The lines ending at a newline, each with its offset, found
    independently: the complete part is what ends at the last newline."""
    end = data.rfind(b"\n") + 1
    found, offset = [], 0
    for number, text in enumerate(data[:end].split(b"\n")[:-1], start=1):
        found.append((number, offset, text if len(text) <= max_line else None, len(text)))
        offset += len(text) + 1
    return found, end


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"{}", b"\n", b"\r", b"\r\n", b"xyzzy" * 3, b" "]), max_size=40),
       st.integers(1, 9), st.integers(3, 12))
def test_lines_and_offsets_are_found_whatever_the_chunks(tmp_path_factory, pieces, chunk, max_line):
    data = b"".join(pieces)
    old = game_log.CHUNK_BYTES
    game_log.CHUNK_BYTES = chunk
    try:
        got, lines = lines_of(data, tmp_path_factory.mktemp("log"), max_line)
    finally:
        game_log.CHUNK_BYTES = old
    want, end = expected_lines(data, max_line)
    assert got == want
    assert lines.good_bytes == end and lines.tail == len(data) - end
    assert lines.torn == bool(data[end:].strip())


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("a", "b", "c"), name="log-test", seed=3, output="out")


def test_a_games_file_past_2_gib_is_read_its_hole_jumped(config):
    """Records before and after a 2 GiB hole (a sparse file: nothing on the
    disk) are all read, and the hole, one line of zeros, is skipped unread."""
    schedule = make_schedule(config.competition)
    config.output.mkdir()
    path = config.output / "games.jsonl"
    before = [record_for(spec).to_line() for spec in schedule[:2]]
    after = [record_for(spec).to_line() for spec in schedule[2:4]]
    with open(path, "wb") as handle:
        handle.write(b"".join(before))
        handle.seek((1 << 31) + 100)
        handle.write(b"\n" + b"".join(after))
    assert path.stat().st_size > 1 << 31
    loaded = ResultsStore(config.output).load()
    assert [r.game_id for r in loaded.records] == [spec.game_id for spec in schedule[:4]]
    hole = (1 << 31) + 100 - len(b"".join(before))
    assert loaded.warnings == [f"{path}:3: skipped an unreadable record ({hole} bytes, over the "
                               f"{store_module.MAX_RECORD_BYTES} a record can hold)"]
    assert loaded.good_bytes == path.stat().st_size


def test_replacing_a_game_keeps_every_other_line_byte_for_byte(config, monkeypatch):
    """--replay rewrites the log streamed: a line too long to be a record, a
    broken line and a torn last line stay as they were."""
    monkeypatch.setattr(store_module, "MAX_RECORD_BYTES", 1000)
    monkeypatch.setattr(game_log, "CHUNK_BYTES", 64)
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        store.append(record_for(schedule[0]))
    path = config.output / "games.jsonl"
    lines = [record_for(schedule[0]).to_line(), b"x" * 3000 + b"\n", b"{broken\n", record_for(schedule[1]).to_line()]
    path.write_bytes(b"".join(lines) + b'{"torn')
    with ResultsStore(config.output) as store:
        store.open_for_run("oxono")
        store.start_appending(store.load("oxono"))  # (cuts the torn tail, as a run does)
        store.replace({schedule[0].game_id: "--replay a"})
    assert path.read_bytes() == b"".join(lines[1:])
    archived = [json.loads(line) for line in (config.output / "replaced.jsonl").read_bytes().splitlines()]
    assert [entry["record"]["game_id"] for entry in archived] == [schedule[0].game_id]


def test_standings_run_under_a_768_mib_address_space(config, tmp_path):
    """No reader asks for the size limit's memory up front (it once asked
    for 2 GiB on every read of a four-game directory)."""
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for spec in schedule[:4]:
            store.append(record_for(spec))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (786432 * 1024, 786432 * 1024))
    done = subprocess.run([sys.executable, "-m", "arena", "standings", str(config.output), "-f", "plain"],
                          capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "a" in done.stdout and "MemoryError" not in done.stderr
