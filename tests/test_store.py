import fcntl
import json
import os
import threading
import time
from dataclasses import replace

import pytest

from arena.bot.version import fingerprint
from arena.game.openings import random_suite
from arena.results.store import ResultsConflict, ResultsStore, StoreBusy
from arena.run.results_dir import RunPlan, open_results
from arena.formats.schedule import make_schedule
from builders import record_for, tournament


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("a", "b", "c"), name="store-test", seed=3, output="out")


def versioned_schedule(config):
    """The schedule as a run plays it: each spec names its bots' versions."""
    return make_schedule(config.competition, {bot.name: fingerprint(bot).version for bot in config.bots})


def test_append_then_load_round_trips_records(config):
    schedule = make_schedule(config.competition)
    store = ResultsStore(config.output)
    with store:
        assert open_results(store, RunPlan(config, store.directory)).records == []
        for spec in schedule[:3]:
            store.append(record_for(spec))
    loaded = ResultsStore(config.output).load()
    assert loaded.warnings == []
    assert [r.to_json() for r in loaded.records] == [record_for(s).to_json() for s in schedule[:3]]
    lines = (config.output / "games.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["game_id"] for line in lines)
    meta = json.loads((config.output / "tournament.json").read_text())
    assert meta["game"] == "oxono" and [b["name"] for b in meta["bots"]] == ["a", "b", "c"]


def test_torn_last_line_is_dropped_with_a_warning_and_cut_before_appending(config):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        store.append(record_for(schedule[0]))
    games = config.output / "games.jsonl"
    whole = json.dumps(record_for(schedule[1]).to_json())
    with open(games, "a") as handle:
        handle.write(whole[: len(whole) // 2])  # a write cut short by kill -9
    loaded = ResultsStore(config.output).load()
    assert [r.game_id for r in loaded.records] == [schedule[0].game_id]
    assert len(loaded.warnings) == 1 and "torn" in loaded.warnings[0]
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        store.append(record_for(schedule[1]))
    loaded = ResultsStore(config.output).load()
    assert loaded.warnings == []
    assert [r.game_id for r in loaded.records] == [schedule[0].game_id, schedule[1].game_id]


def test_unreadable_middle_line_is_reported_and_the_rest_kept(config):
    schedule = make_schedule(config.competition)
    config.output.mkdir()
    lines = [json.dumps(record_for(schedule[0]).to_json()), "{not json", json.dumps(record_for(schedule[1]).to_json())]
    (config.output / "games.jsonl").write_text("\n".join(lines) + "\n")
    loaded = ResultsStore(config.output).load()
    assert [r.game_id for r in loaded.records] == [schedule[0].game_id, schedule[1].game_id]
    assert len(loaded.warnings) == 1 and ":2:" in loaded.warnings[0]


def test_a_stop_signal_while_the_sync_thread_starts_leaves_a_store_that_closes(config, monkeypatch):
    # SIGTERM lands inside Thread.start (found by the league soak: a traceback,
    # "cannot join thread before it is started", instead of "error: interrupted").
    def interrupted(thread):
        raise KeyboardInterrupt

    store = ResultsStore(config.output)
    loaded = store.open_for_run(config.competition.game)
    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.start_appending(loaded)
    monkeypatch.undo()
    store.close()  # no RuntimeError
    with ResultsStore(config.output) as again:  # and the directory is free
        again.open_for_run(config.competition.game)


def test_a_second_writer_is_refused(config):
    with ResultsStore(config.output) as first:
        open_results(first, RunPlan(config, first.directory))
        with pytest.raises(StoreBusy, match="another 'arena run'"):
            open_results(ResultsStore(config.output), RunPlan(config, config.output))
    with ResultsStore(config.output) as again:  # the lock went with the first writer
        open_results(again, RunPlan(config, again.directory))


def test_a_readers_momentary_probe_of_the_lock_does_not_refuse_a_run(config):
    # arena standings --pending and arena serve take a shared lock for an
    # instant to learn whether a run is going: a run starting then waits.
    config.output.mkdir()
    probe = os.open(config.output / ".lock", os.O_RDONLY | os.O_CREAT)
    fcntl.flock(probe, fcntl.LOCK_SH)
    threading.Timer(0.1, os.close, (probe,)).start()
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda c: replace(c, competition=replace(c.competition, seed=4)), "seed"),
        (lambda c: replace(c, competition=replace(c.competition, game="yoxii")), "game"),
        (lambda c: replace(c, competition=replace(c.competition, format="gauntlet")), "format"),
        (lambda c: replace(c, bots=(replace(c.bots[0], options={"depth": 3}),) + c.bots[1:]),
         "bot 'a' .its options changed; 1 games by version"),
        (lambda c: replace(c, competition=replace(c.competition, openings=random_suite("oxono", 2, 3, 0))), "another opening suite"),
    ],
)
def test_a_conflicting_tournament_is_refused_and_nothing_is_lost(config, change, words):
    schedule = versioned_schedule(config)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        store.append(record_for(schedule[0]))
    before = (config.output / "games.jsonl").read_bytes()
    changed = change(config)
    with ResultsStore(config.output) as store:
        with pytest.raises(ResultsConflict, match=words):
            open_results(store, RunPlan(changed, store.directory))
    assert (config.output / "games.jsonl").read_bytes() == before


def test_records_the_schedule_does_not_hold_are_a_conflict(config):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        edited = record_for(schedule[-1])
        edited.game_id = "r1-a~b-g9"
        store.append(edited)
    with ResultsStore(config.output) as store, pytest.raises(ResultsConflict, match="r1-a~b-g9"):
        open_results(store, RunPlan(config, store.directory))


def test_games_of_a_removed_bot_stay_on_disk_and_out_of_the_plan(config):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for spec in schedule:
            store.append(record_for(spec))
    fewer = config.with_bots(config.bots[:2])
    plan = RunPlan(fewer, config.output)
    with ResultsStore(config.output) as store:
        loaded = open_results(store, plan)
    assert sorted(r.game_id for r in loaded.records) == sorted(s.game_id for s in schedule if "c" not in s.players)
    assert len(plan.records.left_out) == 8
    assert plan.records.left_out_line() == (
        "8 games of bots no longer in the tournament are left out of the ranking (kept in games.jsonl): c (8)"
    )
    assert len(ResultsStore(config.output).load().records) == len(schedule)


def test_replace_archives_each_record_once_with_its_reason(config):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for spec in schedule[:4]:
            store.append(record_for(spec))
        lines = (config.output / "games.jsonl").read_bytes().splitlines()
        store.replace({schedule[1].game_id: "--replay b"})
        # Done again (as after a crash between the archive and games.jsonl): archived once.
        (config.output / "games.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
        store.replace({schedule[1].game_id: "--replay b"})
        store.append(record_for(schedule[1], winner="black"))
    archived = [json.loads(line) for line in (config.output / "replaced.jsonl").read_text().splitlines()]
    assert [(a["reason"], a["record"]["game_id"], a["record"]["winner"]) for a in archived] == [
        ("--replay b", schedule[1].game_id, "pink")]
    assert json.dumps(archived[0]["record"], separators=(",", ":"), ensure_ascii=False).encode() == lines[1]
    records = ResultsStore(config.output).load().records
    assert sorted(r.game_id for r in records) == sorted(s.game_id for s in schedule[:4])
    assert next(r for r in records if r.game_id == schedule[1].game_id).winner == "black"


def test_a_conflict_names_what_asked_a_tournament_file_or_a_command(config):
    # arena match has no tournament file (path None): its message says so.
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
    for asked, words in ((replace(config, competition=replace(config.competition, seed=9), path=config.output.parent / "t.yaml"), "the tournament file now says 9"),
                         (replace(config, competition=replace(config.competition, seed=9), path=None), "this command now says 9")):
        with ResultsStore(config.output) as store, pytest.raises(ResultsConflict, match=words):
            open_results(store, RunPlan(asked, store.directory))


def test_more_rounds_extend_a_tournament_without_conflict(config):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for spec in schedule:
            store.append(record_for(spec))
    longer = replace(config, competition=replace(config.competition, rounds=2))
    with ResultsStore(config.output) as store:
        loaded = open_results(store, RunPlan(longer, store.directory))
    assert len(loaded.records) == len(schedule)


def test_appended_lines_are_durable_whole_lines(config, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        store.append(record_for(schedule[0]))
        assert synced, "append must fsync before returning"
        assert (config.output / "games.jsonl").read_bytes().endswith(b"\n")


def test_load_of_a_missing_directory_is_empty(tmp_path):
    loaded = ResultsStore(tmp_path / "nowhere").load()
    assert loaded.records == [] and loaded.warnings == []


def test_a_game_recorded_twice_is_counted_once(config):
    schedule = make_schedule(config.competition)
    config.output.mkdir()
    line = json.dumps(record_for(schedule[0]).to_json())
    (config.output / "games.jsonl").write_text(line + "\n" + line + "\n")
    loaded = ResultsStore(config.output).load()
    assert len(loaded.records) == 1
    assert len(loaded.warnings) == 1 and "second record" in loaded.warnings[0]


def test_records_reach_the_disk_within_the_sync_interval_and_at_close(config, monkeypatch):
    import arena.results.store

    synced = []  # the file's size at each fdatasync
    real = os.fdatasync
    monkeypatch.setattr(arena.results.store, "SYNC_INTERVAL_S", 0.05)
    monkeypatch.setattr(arena.results.store.os, "fdatasync", lambda fd: (synced.append(os.fstat(fd).st_size), real(fd)))
    schedule = make_schedule(config.competition)
    store = ResultsStore(config.output)
    open_results(store, RunPlan(config, store.directory))
    for spec in schedule[:3]:
        store.append(record_for(spec))
    size = (config.output / "games.jsonl").stat().st_size
    deadline = time.monotonic() + 10
    while (not synced or synced[-1] < size) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert synced and synced[-1] == size
    # Nothing new: no more syncs.
    count = len(synced)
    time.sleep(0.2)
    assert len(synced) == count
    # A record written just before the end is synced by close().
    store.append(record_for(schedule[3]))
    store.close()
    assert synced[-1] == (config.output / "games.jsonl").stat().st_size > size
