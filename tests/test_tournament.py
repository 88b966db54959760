"""Whole tournaments: parallel play, resuming, interruption, determinism."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from arena.results.standings import compute_standings
from arena.results.store import ResultsConflict, ResultsStore
from arena.run.config import ConfigError, load_config
from arena.formats.schedule import make_schedule
from arena.run.results_dir import RunPlan
from arena.run.tournament import run_tournament
from builders import ROOT, records, slow_tournament, tournament_file

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def write_tournament(tmp_path, *, bots=("a", "b", "c"), extra="", **settings):
    return tournament_file(tmp_path, bots, extra, file="t.yaml", **{"name": "t", "seed": 5, **settings})


def game_ids(directory):
    return [r["game_id"] for r in records(directory)]


def test_plays_every_scheduled_game_once_in_parallel(tmp_path):
    config = load_config(write_tournament(tmp_path))
    summary = run_tournament(config)
    schedule = make_schedule(config.competition)
    assert summary.played == summary.total == len(schedule) == 12
    assert sorted(game_ids(config.output)) == sorted(s.game_id for s in schedule)
    assert all(r.forfeit_by is None for r in summary.records)
    logs = sorted(str(p.relative_to(config.output / "logs")) for p in (config.output / "logs").glob("*/*.log"))
    # a directory per bot, a file per process that started it: one from the
    # pre-flight, then bots are reused within a worker: at most one log (one
    # process) per bot and worker
    assert sorted(p.name for p in (config.output / "logs").iterdir()) == ["a", "b", "c"]
    assert [name for name in logs if name.endswith("/preflight.log")] == ["a/preflight.log", "b/preflight.log", "c/preflight.log"]
    workers = [name for name in logs if not name.endswith("/preflight.log")]
    assert workers and len(workers) <= 3 * 2 and all(re.fullmatch(r"[abc]/w[12]\.log", name) for name in workers)
    # and each game's stderr in a file of each of its bots, named by the game's id
    games = sorted(str(p.relative_to(config.output / "logs")) for p in (config.output / "logs").glob("*/games/*.log"))
    assert games == sorted(f"{name}/games/{s.game_id}.log" for s in schedule for name in s.players)


#: Plays the first legal move and writes its own name (argv[1]) on stderr
#: for every line it receives.
NAMED_BOT = """import json, sys
me = sys.argv[1]
for line in sys.stdin:
    print("I am " + me, file=sys.stderr, flush=True)
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": message["legal_moves"][0]}), flush=True)
    elif message["type"] == "quit":
        break
"""


def test_each_log_holds_only_its_own_bots_lines_whatever_the_names(tmp_path):
    # "x.w1" is both a bot and, as logs/<name>.w<N>.log once named them, bot x's first worker.
    (tmp_path / "named.py").write_text(NAMED_BOT)
    entries = "".join(f"  - {{name: {name}, cmd: [python, named.py, {name}]}}\n" for name in ("x", "x.w1"))
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 10+0.1\nconcurrency: 1\noutput: out\nbots:\n{entries}")
    config = load_config(path)
    summary = run_tournament(config)
    assert summary.played == summary.total > 0 and all(r.forfeit_by is None for r in summary.records)
    logs = config.output / "logs"
    for name in ("x", "x.w1"):
        files = sorted(p.name for p in (logs / name).iterdir())
        assert files == ["games", "preflight.log", "w1.log"]
        files = ["preflight.log", "w1.log"] + [f"games/{p.name}" for p in (logs / name / "games").iterdir()]
        for file in files:
            lines = [line for line in (logs / name / file).read_text().splitlines() if not line.startswith("=== game ")]
            assert lines and set(lines) == {f"I am {name}"}, (name, file, lines)
    assert sorted(p.name for p in logs.iterdir()) == ["x", "x.w1"]


def test_rerun_resumes_without_replaying(tmp_path):
    config = load_config(write_tournament(tmp_path))
    run_tournament(config)
    before = (config.output / "games.jsonl").read_bytes()
    again = run_tournament(config)
    assert again.played == 0 and again.resumed == 12
    assert (config.output / "games.jsonl").read_bytes() == before


def test_resume_after_partial_results_and_a_torn_line(tmp_path):
    config = load_config(write_tournament(tmp_path))
    run_tournament(config)
    games = config.output / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    games.write_bytes(b"".join(lines[:5]) + lines[5][:40])  # as if killed mid-write of the 6th
    summary = run_tournament(config)
    assert summary.resumed == 5 and summary.played == 7
    assert any("torn" in w for w in summary.warnings)
    ids = game_ids(config.output)
    assert len(ids) == len(set(ids)) == 12


def test_same_seed_gives_the_same_standings_at_any_concurrency(tmp_path):
    tables = []
    for concurrency in (1, 2):
        directory = tmp_path / f"c{concurrency}"
        directory.mkdir()
        config = load_config(write_tournament(directory, concurrency=concurrency))
        summary = run_tournament(config)
        ranked = compute_standings(summary.records, [b.name for b in config.bots]).bots
        tables.append([(b.name, b.mu, b.sigma, b.wins, b.draws, b.losses) for b in ranked])
        moves = {r.game_id: [m.move for m in r.moves] for r in summary.records}
        tables.append(json.dumps(moves, sort_keys=True))
    assert tables[0] == tables[2] and tables[1] == tables[3]


def test_a_changed_file_that_conflicts_is_refused(tmp_path):
    path = write_tournament(tmp_path)
    run_tournament(load_config(path))
    before = (tmp_path / "out" / "games.jsonl").read_bytes()
    write_tournament(tmp_path, seed=6)
    with pytest.raises(ResultsConflict, match="seed"):
        run_tournament(load_config(path))
    assert (tmp_path / "out" / "games.jsonl").read_bytes() == before


def test_yoxii_gauntlet(tmp_path):
    config = load_config(write_tournament(tmp_path, game="yoxii", bots=("a", "b", "c", "d"), extra="format: gauntlet\n"))
    summary = run_tournament(config)
    assert summary.played == 3 * 2
    assert all(r.reason == "blocked" and r.scores for r in summary.records)
    assert all("a" in r.players.values() for r in summary.records)


def descendants_alive(pids):
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "State:\tZ" not in status.read_text():
            alive.append(pid)
    return alive


def bot_pids(tag):
    """Bots of the test tournament, found by the marker in their environment."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if f"ARENA_TEST_TAG={tag}".encode() in (entry / "environ").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_interrupted_run_keeps_finished_games_kills_bots_and_resumes(tmp_path, how):
    tag = f"{os.getpid()}-{how}"
    path = slow_tournament(tmp_path, rounds=20, bot_keys=f"env: {{ARENA_TEST_TAG: {tag}}}")
    games = tmp_path / "out" / "games.jsonl"
    arena = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not games.exists() or len(games.read_bytes().splitlines()) < 2):
        time.sleep(0.1)
    assert games.exists(), arena.stderr.read().decode() if arena.poll() is not None else "no game finished in time"
    pids = bot_pids(tag)
    assert pids, "the bots should be running"
    os.kill(arena.pid, how)
    _, stderr = arena.communicate(timeout=30)
    if how != signal.SIGKILL:
        assert arena.returncode == 130
        assert b"interrupted" in stderr and b"resume" in stderr
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and descendants_alive(bot_pids(tag)):
        time.sleep(0.1)
    assert descendants_alive(bot_pids(tag)) == [], "bot processes outlived the arena"
    if how == signal.SIGKILL:
        # the workers are orphans for a moment: they notice and die with their bots
        pass
    kept = ResultsStore(tmp_path / "out").load()
    assert len(kept.records) >= 2
    ids = [r.game_id for r in kept.records]
    assert len(ids) == len(set(ids))


class ScriptedExecutor:
    """Stands in for a cluster executor: seat 0 wins every game it is given,
    and it can fail after a number of games, like a lost cluster."""

    def __init__(self, fail_after=None):
        self.given = []
        self.fail_after = fail_after
        self.closed = False

    def session(self):
        from contextlib import nullcontext

        return nullcontext()

    def run(self, specs):
        from arena.game.records import GameRecord

        try:
            # The specs come lazily (an SPRT may end them early): one pass, as they are needed.
            for number, spec in enumerate(specs):
                self.given.append(spec.game_id)
                if number == self.fail_after:
                    raise RuntimeError("cluster lost")
                colors = ("pink", "black")
                yield GameRecord(game_id=spec.game_id, game=spec.game, players=dict(zip(colors, spec.players)),
                                 seed=spec.seed, opening=spec.opening, time_control={"per_move_ms": 1},
                                 winner="pink", reason="alignment", index=spec.index, round=spec.round)
        finally:
            self.closed = True


def test_another_executor_plugs_in_and_only_gets_the_missing_games(tmp_path):
    config = load_config(write_tournament(tmp_path))
    failing = ScriptedExecutor(fail_after=5)
    with pytest.raises(RuntimeError, match="cluster lost"):
        run_tournament(config, executor=failing)
    assert failing.closed and len(game_ids(config.output)) == 5
    second = ScriptedExecutor()
    summary = run_tournament(config, executor=second)
    assert len(second.given) == 7 and not set(second.given) & set(game_ids(config.output)[:5])
    assert summary.resumed == 5 and summary.played == 7
    assert sorted(game_ids(config.output)) == sorted(s.game_id for s in make_schedule(config.competition))


# -- SPRT: stop once decided, resume only while undecided ---------------------------


def write_sprt(tmp_path, first, second, *, rounds, sprt="{elo0: 0, elo1: 200}", extra=""):
    return tournament_file(tmp_path, ("first", "second"), f"sprt: {sprt}\n{extra}", file="sprt.yaml",
                           cmds={"first": first, "second": second}, name="s", rounds=rounds, seed=11)


def test_sprt_stops_early_when_greedy_is_clearly_stronger_and_a_rerun_plays_nothing(tmp_path):
    config = load_config(write_sprt(tmp_path, "python -m bots.greedy", "python -m bots.random_bot", rounds=50))
    summary = run_tournament(config)
    status = summary.sprt
    assert status is not None and status.verdict == "H1" and status.llr >= status.config.upper
    # The games in flight when the bound was crossed (at most the concurrency) finish and count.
    assert 2 * status.pairs <= summary.played <= 2 * status.pairs + 2 < summary.total == 200
    assert len(ResultsStore(config.output).load().records) == summary.played
    again = run_tournament(config)
    assert again.played == 0 and again.sprt == status


def test_sprt_between_two_equal_bots_does_not_accept_h1(tmp_path):
    config = load_config(write_sprt(tmp_path, "python -m bots.random_bot", "python -m bots.random_bot", rounds=40))
    # One game at a time: no game still in flight when the LLR crosses a
    # bound can count after it and take the verdict back.
    summary = run_tournament(replace(config, concurrency=1))
    assert summary.sprt.verdict in ("H0", "undecided")
    assert summary.sprt.verdict == "H0" or summary.sprt.at_limit


def test_an_undecided_sprt_resumes_and_a_decided_one_does_not(tmp_path):
    greedy, rnd = "python -m bots.greedy", "python -m bots.random_bot"
    short = load_config(write_sprt(tmp_path, greedy, rnd, rounds=1))
    first = run_tournament(short)
    assert first.played == 4 and first.sprt.verdict == "undecided" and first.sprt.at_limit
    longer = load_config(write_sprt(tmp_path, greedy, rnd, rounds=50))
    second = run_tournament(longer)
    assert second.resumed == 4 and second.played > 0 and second.sprt.verdict == "H1"
    assert run_tournament(longer).played == 0


def test_sprt_needs_two_bots(tmp_path):
    path = write_tournament(tmp_path, bots=("a", "b", "c"), extra="sprt: {elo0: 0, elo1: 5}\n")
    with pytest.raises(ConfigError, match="an SPRT compares two bots; this file has 3"):
        load_config(path)


# Plays a tournament of instant games and prints each game id as soon as the
# run has counted it (on_record), like the progress line does.
REPORTING_RUN = """
import sys
from arena.run.config import load_config
from arena.run.tournament import run_tournament
run_tournament(load_config(sys.argv[1]), on_record=lambda record, summary: print(record.game_id, flush=True))
"""


@pytest.mark.parametrize("after", [5, 30])
def test_kill_9_keeps_every_game_the_run_reported(tmp_path, after):
    path = write_tournament(tmp_path, rounds=40, bots=("a", "b"))
    run = subprocess.Popen([sys.executable, "-c", REPORTING_RUN, str(path)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported = []
    deadline = time.monotonic() + 60
    while len(reported) < after and time.monotonic() < deadline:
        line = run.stdout.readline()
        if not line:
            break
        reported.append(line.strip())
    run.kill()  # SIGKILL, in the middle of the stream of games
    rest, stderr = run.communicate(timeout=30)
    reported += rest.split()
    assert len(reported) >= after, stderr
    kept = ResultsStore(tmp_path / "out").load()
    assert set(reported) <= {record.game_id for record in kept.records}
    assert len(kept.records) < 40 * 4, "the run should have been killed before the end"


def test_report_true_writes_the_final_report(tmp_path):
    config = load_config(write_tournament(tmp_path, bots=("a", "b"), extra="report: true\n"))
    summary = run_tournament(config)
    page = (tmp_path / "out" / "report.html").read_text()
    assert '<p id="status" class="status final">4 games;' in page
    for record in summary.records:
        assert f'"id":"{record.game_id}"' in page
    assert not summary.warnings and summary.report == tmp_path / "out" / "report.html"
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".report")) == []


def test_a_report_that_cannot_be_written_does_not_stop_the_games(tmp_path):
    config = load_config(write_tournament(tmp_path, bots=("a", "b"), extra="report: true\n"))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.html").mkdir()  # a directory where the file should go
    summary = run_tournament(config)
    assert summary.played == 4 and len(game_ids(tmp_path / "out")) == 4
    assert len(summary.warnings) == 1 and "cannot write the report" in summary.warnings[0]
    assert summary.report is None


def test_the_rounds_a_run_reports_hold_every_game_recorded_so_far(tmp_path):
    # The live leader of a Swiss is the first place of these rounds: read at
    # pairing time, they showed the seeding's first bot (one that did not
    # even start) through round 1, and the last round's leader before its games.
    config = load_config(write_tournament(tmp_path, bots=("a", "b", "c", "d"), rounds=2, extra="format: swiss\n"))
    seen: list[tuple[int, int]] = []

    def on_record(record, summary):
        counted = sum(len(result.games) for stage in summary.rounds.stages for result in stage.results.values())
        seen.append((counted, len(summary.records)))

    run_tournament(config, on_record=on_record)
    assert len(seen) == 8 and all(counted == recorded for counted, recorded in seen), seen


def test_a_swiss_plays_every_round_on_the_same_workers_and_bot_processes(tmp_path):
    # Workers started again each round started every bot again each round.
    config = load_config(write_tournament(tmp_path, bots=("a", "b", "c", "d"), rounds=3, extra="format: swiss\n"))
    summary = run_tournament(config, concurrency=2)
    assert summary.played == 12 and {r.game_id.split("-")[0] for r in summary.records} == {"r1", "r2", "r3"}
    workers = {str(p.relative_to(config.output / "logs")) for p in (config.output / "logs").glob("*/w*.log")}
    assert workers and all(re.fullmatch(r"[abcd]/w[12]\.log", name) for name in workers), workers


def test_a_swiss_run_reads_its_rounds_once_a_round_not_after_each_game(tmp_path, monkeypatch):
    # Reading the rounds takes every record: after each game, a run of n games cost O(n²).
    config = load_config(write_tournament(tmp_path, bots=("a", "b", "c", "d"), rounds=3, extra="format: swiss\n"))
    reads = []
    progress = RunPlan.progress
    monkeypatch.setattr(RunPlan, "progress", lambda plan, records: reads.append(len(records)) or progress(plan, records))
    summary = run_tournament(config)
    assert summary.played == 12 and reads == []
    # Asked for, they hold every game so far.
    assert sum(len(r.games) for stage in summary.rounds.stages for r in stage.results.values()) == 12


def test_the_records_a_run_holds_are_kept_out_of_full_garbage_collections_until_it_ends(tmp_path, monkeypatch):
    import gc

    from arena.run import gc_held

    monkeypatch.setattr(gc_held, "FREEZE_EVERY", 2)
    config = load_config(write_tournament(tmp_path))
    collected: list[bool] = []

    def on_record(record, summary):
        # The walk of a full collection grew with every record the run held: a frozen one is not walked.
        walked = {id(o) for o in gc.get_objects()}
        collected.append(id(summary.records[0]) in walked)

    summary = run_tournament(config, executor=ScriptedExecutor(), on_record=on_record)
    assert len(collected) == 12 and collected[0] and not any(collected[1:])
    assert gc.get_freeze_count() == 0 and id(summary.records[0]) in {id(o) for o in gc.get_objects()}


def test_a_resumed_run_reads_its_records_without_collecting_and_keeps_them_out_of_full_collections(tmp_path):
    import gc

    config = load_config(write_tournament(tmp_path))
    with pytest.raises(RuntimeError, match="cluster lost"):
        run_tournament(config, executor=ScriptedExecutor(fail_after=5))
    walked: list[bool] = []

    def on_start(summary):
        held = {id(o) for o in gc.get_objects()}
        walked.append(any(id(record) in held for record in summary.records))

    summary = run_tournament(config, executor=ScriptedExecutor(), on_start=on_start)
    assert summary.resumed == 5 and walked == [False]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_record_the_run_stored_keeps_its_moves_in_the_log_not_in_memory(tmp_path):
    from arena.results.game_index import LazyMoves

    config = load_config(write_tournament(tmp_path))
    summary = run_tournament(config)
    lines = {line["game_id"]: line for line in records(config.output)}
    assert len(summary.records) == len(lines) == 12
    for record in summary.records:
        assert isinstance(record.moves, LazyMoves) and record._line is None
        assert [move.to_json() for move in record.moves] == lines[record.game_id]["moves"]
        assert json.loads(record.to_line()) == lines[record.game_id]
