"""A resumed league carries its plan on from what the index keeps of the
games read before (:mod:`arena.run.resume_read`): the same games left, the
same records, warnings and standings as a read of every record, and no
record read but those added since."""

import shutil
import sqlite3
from dataclasses import replace

import pytest

from arena.formats.schedule import make_schedule
from arena.game.records import GameRecord
from arena.results.game_index import INDEX_FILE
from arena.results.standings import compute_standings
from arena.results.store import ResultsConflict, ResultsStore, StoreError
from arena.run.config import load_config
from arena.run.results_dir import RunPlan, VersionChanged
from arena.run.resume_read import KeptRecords
from arena.run.tournament import pending_specs, run_tournament
from builders import InstantExecutor, counted_decodes, record_for, tournament_file

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def _won_by_seat_0(spec):
    """The record of ``spec`` won by seat 0."""
    return GameRecord(game_id=spec.game_id, game=spec.game, players=dict(zip(("pink", "black"), spec.players)),
                      seed=spec.seed, opening=spec.opening, time_control={"per_move_ms": 1},
                      winner="pink", reason="alignment", index=spec.index, round=spec.round,
                      versions=dict(zip(("pink", "black"), spec.versions)) or None)


def _league(directory, rounds, left, *, names=("a", "b", "c", "d"), bots=("a", "b", "c", "d")):
    """A league of ``bots`` over ``rounds`` rounds whose directory holds its
    games, by the bots ``names`` and their versions now, but the last ``left``."""
    directory.mkdir()
    config = load_config(tournament_file(directory, bots, rounds=rounds, seed=5))
    config.output.mkdir()
    versions = {"gone": "v1", **{name: fp.version for name, fp in RunPlan(config, config.output).fingerprints.items()}}
    played = make_schedule(replace(config.competition, names=names), versions)
    lines = [record_for(spec).to_line() for spec in played[:len(played) - left]]
    (config.output / "games.jsonl").write_bytes(b"".join(lines[1::3] + lines[::3]))  # holes, out of order
    return config, played


def _forget(config):
    """Drop the answers the index keeps: the next resume reads every record."""
    with sqlite3.connect(config.output / INDEX_FILE) as index:
        index.execute("DELETE FROM answers")


def _run(config, limit=None, keep=()):
    executor = InstantExecutor(_won_by_seat_0, limit)
    summary = run_tournament(config, executor=executor, keep=keep)
    table = compute_standings(summary.records, [bot.name for bot in config.bots]).bots
    return (executor.given, [(r.game_id, r.index, r.pair, r.round, r.winner, r.forfeit_by) for r in summary.records],
            [(b.name, b.mu, b.sigma, b.wins, b.draws, b.losses) for b in table], summary.total, summary.resumed,
            summary.warnings)


def _open(config, keep=()):
    with ResultsStore(config.output) as store:
        plan = RunPlan(config, store.directory, keep=keep)
        loaded = plan.open(store)
        return plan, loaded


def _read_whole(monkeypatch):
    """From now on, a resume reads every record, as one that needs them before its first game does."""
    monkeypatch.setattr(RunPlan, "_question", lambda self, game_ids: None)


def test_a_resume_carried_on_is_a_read_of_every_record(tmp_path):
    ran = {}
    # carried on from what the index keeps; the first, the index keeping nothing; and a read of every record
    for way in ("carried", "first", "whole"):  # (in the same directory: the warnings name it)
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        config, played = _league(tmp_path / "league", 3, 40, names=("a", "b", "c", "gone"))
        first = _run(config, limit=7)  # read whole, kept in the index; 7 games played and appended
        log = config.output / "games.jsonl"
        lines = log.read_bytes().splitlines(keepends=True)
        forfeit = record_for(played[-1])
        forfeit.end_by_forfeit(1, "crash", "it crashed")
        # added since: a second record of a game kept, a forfeit, a game of the bot that left, a torn line
        log.write_bytes(b"".join(lines) + lines[0] + forfeit.to_line() + b'{"game_id": "torn')
        plan, loaded = _open(config)
        if way != "carried":
            _forget(config)
            with pytest.MonkeyPatch.context() as monkeypatch:
                if way == "whole":
                    _read_whole(monkeypatch)
                plan, loaded = _open(config)
        assert isinstance(plan.kept, KeptRecords) == (way != "whole")
        ran[way] = (first, loaded.warnings, loaded.good_bytes, [(r.game_id, r.index) for r in plan.kept],
                    [r.game_id for r in plan.records.left_out], pending_specs(plan.schedule, plan.kept),
                    plan.replaced, plan.meta, _run(config))
    assert ran["carried"] == ran["first"] == ran["whole"]
    assert ran["carried"][-1][0] and any("second record" in w for w in ran["carried"][1])


def test_a_resume_reads_no_record_but_those_added_since(tmp_path, monkeypatch):
    decoded = counted_decodes(monkeypatch)
    read = {}
    for rounds in (3, 12):
        config, _ = _league(tmp_path / f"r{rounds}", rounds, 20)
        _run(config, limit=5)  # every record read once (the index built), 5 games added
        decoded.clear()
        plan, _ = _open(config)
        read[rounds] = len(decoded)
        assert isinstance(plan.kept, KeptRecords)
        assert len(plan.kept) + len(pending_specs(plan.schedule, plan.kept)) == len(plan.schedule)
        assert len(decoded) == read[rounds]  # (none read for the plan's games left)
    assert read[3] == read[12] == 5  # the games the last run added, whatever the games before


def test_a_bot_of_another_version_stops_a_carried_resume_as_a_whole_read(tmp_path, monkeypatch):
    said = {}
    for way in ("carried", "first", "whole"):
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        config, played = _league(tmp_path / "league", 2, 10)
        _run(config, limit=2)
        log = config.output / "games.jsonl"
        old = record_for(played[-1])
        old.versions = {"pink": "old-version", "black": old.versions["black"]}
        with open(log, "ab") as out:
            out.write(old.to_line())
        if way != "carried":
            _forget(config)
        if way == "whole":
            _read_whole(monkeypatch)
        with pytest.raises(VersionChanged) as raised:
            _open(config)
        said[way] = str(raised.value)
    assert said["carried"] == said["first"] == said["whole"] and "old-version" in said["carried"]


def test_a_log_edited_under_a_run_is_one_line_when_its_records_are_read(tmp_path):
    config, _ = _league(tmp_path / "league", 2, 10)
    _run(config, limit=2)
    plan, _ = _open(config)
    kept = plan.kept
    log = config.output / "games.jsonl"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[1:]))  # a game cut out by hand
    with pytest.raises(StoreError, match=r"games.jsonl changed while the run used it: \d+ games kept where \d+ were read"):
        list(kept)


def test_a_first_resume_makes_no_record_of_the_games_it_keeps(tmp_path, monkeypatch):
    """The index keeping nothing for the run (another tournament file, an
    upgrade), a resume folds each game in from what the index holds of its
    line: it makes the records of the forfeits (the run may play them
    again), not those of the games it keeps, however many."""
    decoded = counted_decodes(monkeypatch)
    read = {}
    for rounds in (3, 12):
        config, played = _league(tmp_path / f"r{rounds}", rounds, 20)
        forfeit = record_for(played[0])
        forfeit.end_by_forfeit(1, "illegal_move", "a1")  # (a forfeit that stands)
        log = config.output / "games.jsonl"
        log.write_bytes(b"".join(line if played[0].game_id.encode() not in line else forfeit.to_line()
                                 for line in log.read_bytes().splitlines(keepends=True)))
        _run(config, limit=5)  # every record read once (the index built), 5 games added
        games = len(ResultsStore(config.output).load().records)  # (the index covers them all)
        _forget(config)
        decoded.clear()
        plan, _ = _open(config)
        read[rounds] = len(decoded)
        assert isinstance(plan.kept, KeptRecords) and len(plan.kept) == games
        assert [r.game_id for r in plan._resume.forfeits] == [played[0].game_id]
        assert len(pending_specs(plan.schedule, plan.kept)) == len(played) - games
    assert read[3] == read[12] == 1  # the forfeit


def test_a_first_resume_sorts_the_games_the_index_holds_as_a_read_of_every_record(tmp_path, monkeypatch):
    """Lines the index holds that a first resume cannot count from it (a
    second record of a game, a forfeit, a game of a bot that left, one of
    another tournament's seed, a line that is no record, a game of another
    version) give what a read of every record gives: the same warnings,
    games kept and left, and plan."""
    ran = {}
    for way in ("first", "whole"):  # (in the same directory: the warnings name it)
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        config, played = _league(tmp_path / "league", 3, 40, names=("a", "b", "c", "gone"))
        _run(config, limit=7)
        log = config.output / "games.jsonl"
        lines = log.read_bytes().splitlines(keepends=True)
        forfeit = record_for(played[-1])
        forfeit.end_by_forfeit(1, "crash", "it crashed")
        old = record_for(played[-2])
        old.versions = {"pink": "old-version", "black": old.versions["black"]}
        log.write_bytes(b"".join(lines) + lines[0] + forfeit.to_line() + b"not a record\n" + old.to_line())
        assert len(ResultsStore(config.output).load().warnings) == 2  # (indexed)
        _forget(config)
        with pytest.MonkeyPatch.context() as patched:
            if way == "whole":
                _read_whole(patched)
            plan, loaded = _open(config, keep=[old.players["pink"]])
        assert isinstance(plan.kept, KeptRecords) == (way == "first")
        ran[way] = (loaded.warnings, loaded.good_bytes, [(r.game_id, r.index) for r in plan.kept],
                    [r.game_id for r in plan.records.left_out], pending_specs(plan.schedule, plan.kept),
                    plan.replaced, plan.meta, _run(config, keep=[old.players["pink"]]))
    assert ran["first"] == ran["whole"]
    assert any("second record" in w for w in ran["first"][0]) and ran["first"][3]
    assert [bot.earlier_versions for bot in ran["first"][-2].bots if bot.earlier_versions] == [("old-version",)]


def test_a_first_resume_refuses_a_game_of_another_tournament_as_a_read_of_every_record(tmp_path, monkeypatch):
    said = {}
    for way in ("first", "whole"):
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        config, played = _league(tmp_path / "league", 2, 10)
        _run(config, limit=2)
        other = record_for(played[-1])
        other.seed += 1  # (another seed's game, under this one's id)
        with open(config.output / "games.jsonl", "ab") as out:
            out.write(other.to_line())
        ResultsStore(config.output).load()  # (indexed)
        _forget(config)
        if way == "whole":
            _read_whole(monkeypatch)
        with pytest.raises(ResultsConflict) as raised:
            _open(config)
        said[way] = str(raised.value)
    assert said["first"] == said["whole"] and "does not schedule" in said["first"]


def test_a_first_resume_reads_the_ids_of_bots_named_as_ids_are_written(tmp_path, monkeypatch):
    """Bots whose names hold what an id's parts are cut at (``-``, ``-g``
    and a number): a first resume counts their games from the index as a
    read of every record sorts them."""
    decoded = counted_decodes(monkeypatch)
    bots = ("a-g1", "a-g1-g2", "b-1", "r1")
    planned = {}
    for way in ("first", "whole"):
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        config, played = _league(tmp_path / "league", 3, 10, names=bots, bots=bots)
        _run(config, limit=2)
        ResultsStore(config.output).load()  # (the index covers every line)
        _forget(config)
        decoded.clear()
        with pytest.MonkeyPatch.context() as patched:
            if way == "whole":
                _read_whole(patched)
            plan, loaded = _open(config)
        if way == "first":
            assert not decoded and isinstance(plan.kept, KeptRecords)
        planned[way] = (loaded.warnings, [(r.game_id, r.index) for r in plan.kept], pending_specs(plan.schedule, plan.kept))
    assert planned["first"] == planned["whole"] and planned["first"][2]
