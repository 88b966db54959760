"""The local executor: parallel games, bot reuse per worker, and no hang when a worker dies."""

import os
import signal
import sys
import time

import multiprocess
import pytest

from arena.run.config import parse_config
from arena.game.records import GameSpec
from arena.run.executor import LocalExecutor, _spec_from_line, _spec_line
from arena.formats.schedule import make_schedule
from arena.run.spec_queue import WorkerDied
from builders import ROOT


pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def config(tmp_path, cmd, rounds=1):
    return parse_config(
        f"game: oxono\ntime_control: 30+0\nrounds: {rounds}\nconcurrency: 2\nseed: 4\n"
        f"bots:\n  - {{name: a, cmd: {cmd}}}\n  - {{name: b, cmd: {cmd}}}\n",
        base_dir=ROOT,
        path=tmp_path / "t.yaml",
    )


def test_every_spec_comes_back_once_with_its_own_record(tmp_path):
    cfg = config(tmp_path, "python -m bots.random_bot", rounds=3)
    specs = make_schedule(cfg.competition)
    records = list(LocalExecutor(cfg, tmp_path / "logs").run(specs))
    assert sorted(r.game_id for r in records) == sorted(s.game_id for s in specs)
    by_id = {s.game_id: s for s in specs}
    for record in records:
        spec = by_id[record.game_id]
        assert tuple(record.players.values()) == spec.players
        assert (record.seed, record.opening, record.index) == (spec.seed, spec.opening, spec.index)
    # one log per bot and worker: each worker kept its bot processes for all its games
    logs = sorted(str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").glob("*/*.log"))
    assert logs and set(logs) <= {"a/w1.log", "a/w2.log", "b/w1.log", "b/w2.log"}
    # and a log per bot and game, named by the game's id
    games = sorted(str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").glob("*/games/*.log"))
    assert games == sorted(f"{name}/games/{s.game_id}.log" for s in specs for name in s.players)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kills a worker by pid")
def test_a_killed_worker_stops_the_run_instead_of_hanging(tmp_path):
    cfg = config(tmp_path, f"[python, {ROOT / 'tests' / 'bots' / 'slow.py'}, '0.05']", rounds=5)
    finished = LocalExecutor(cfg).run(make_schedule(cfg.competition))
    next(finished)  # the pool is up and playing
    victim = multiprocess.active_children()[0]
    os.kill(victim.pid, signal.SIGKILL)
    started = time.monotonic()
    with pytest.raises(WorkerDied, match="every finished game is kept"):
        for _ in finished:
            pass
    assert time.monotonic() - started < 20


def test_a_spec_reaches_its_worker_whole():
    """The line a worker gets a spec in gives back the very spec, tuples and all."""
    spec = GameSpec(index=7, game_id="r2-a~b-g3", game="oxono", round=2, players=("a", "b"), opening=3, seed=2**40,
                    pair=1, opening_moves=("Xa1 a2",), versions=("v1", "v2"))
    assert _spec_from_line(_spec_line(spec)) == spec
    assert _spec_from_line(_spec_line(GameSpec(0, "g", "yoxii", 1, ("a", "b"), 0, 1))) == GameSpec(0, "g", "yoxii", 1, ("a", "b"), 0, 1)


def started_by(tmp_path):
    """A bot command that adds a line to ``tmp_path/starts`` each time it starts, and that file."""
    starts = tmp_path / "starts"
    return f"[sh, -c, 'echo x >> {starts}; exec python -m bots.random_bot']", starts


def two_rounds(tmp_path, cmd="python -m bots.random_bot"):
    """The games of two rounds of bots a and b (each ``cmd``), and an executor of two workers for them."""
    cfg = config(tmp_path, cmd, rounds=2)
    return make_schedule(cfg.competition), LocalExecutor(cfg, tmp_path / "logs")


def test_the_runs_of_a_session_play_on_the_same_workers_and_bot_processes(tmp_path):
    cmd, starts = started_by(tmp_path)
    specs, executor = two_rounds(tmp_path, cmd)
    with executor.session():
        # a sequence, then specs read lazily (an SPRT's), then a run with fewer games than workers
        for run, played in ((specs, specs), (iter(specs), specs), (specs[:1], specs[:1])):
            assert sorted(r.game_id for r in executor.run(run)) == sorted(s.game_id for s in played)
    # each worker started each bot once, not once a run
    assert len(starts.read_text().splitlines()) <= 4
    logs = {str(p.relative_to(tmp_path / "logs")) for p in (tmp_path / "logs").glob("*/*.log")}
    assert logs and logs <= {"a/w1.log", "a/w2.log", "b/w1.log", "b/w2.log"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kills a worker by pid")
def test_a_worker_killed_between_the_runs_of_a_session_is_replaced_not_charged_with_a_game(tmp_path):
    specs, executor = two_rounds(tmp_path)
    with executor.session():
        assert len(list(executor.run(specs))) == len(specs)
        victim = multiprocess.active_children()[0]
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        assert sorted(r.game_id for r in executor.run(specs)) == sorted(s.game_id for s in specs)
    assert (tmp_path / "logs" / "a" / "w3.log").exists() or (tmp_path / "logs" / "b" / "w3.log").exists()


def test_a_run_of_a_session_that_ends_early_ends_its_workers_and_the_next_run_starts_its_own(tmp_path):
    cmd, starts = started_by(tmp_path)
    specs, executor = two_rounds(tmp_path, cmd)
    with executor.session():
        first = executor.run(specs)
        next(first)
        first.close()  # (the caller failed): workers and bots end at once
        assert multiprocess.active_children() == []
        before = len(starts.read_text().splitlines())
        assert sorted(r.game_id for r in executor.run(specs)) == sorted(s.game_id for s in specs)
        assert len(starts.read_text().splitlines()) > before
    assert multiprocess.active_children() == []


def test_a_session_left_by_an_exception_ends_its_idle_workers_at_once(tmp_path):
    specs, executor = two_rounds(tmp_path)
    with pytest.raises(KeyboardInterrupt), executor.session():
        list(executor.run(specs))
        assert len(multiprocess.active_children()) == 2  # kept, idle, with their bots
        raise KeyboardInterrupt  # (Ctrl-C between two rounds)
    assert multiprocess.active_children() == []
