"""``arena run`` of a resumed league whose records were not read
(:mod:`arena.run.carried_run`): its progress line's leader and its
standings at the end carried on from the standings the index keeps, the
same as those of the records, and no kept record read for them."""

import functools
import re
import shutil
from dataclasses import replace

import pytest

import arena.cli as cli
import arena.progress as progress
import arena.run.tournament as tournament
from arena.formats.schedule import FixedSchedule, make_schedule
from arena.results.game_index import INDEX_FILE
from arena.results.standings import RunningLeader, StandingsFold
from arena.run.config import load_config
from arena.run.progress_lines import Periodic
from arena.results.store import ResultsStore
from arena.run.results_dir import RunPlan, open_results
from arena.run.tournament import run_tournament
from builders import InstantExecutor, counted_decodes, arena, forfeit, result, tournament_file

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def _outcome(spec):
    """Some game of each kind, by the game's index: won by either seat, drawn, forfeited."""
    if spec.index % 7 == 3:
        return forfeit(spec, spec.players[1], "crash")
    if spec.index % 5 == 0:
        return result(spec, None)
    return result(spec, spec.players[spec.index % 3 == 0])


def _league(directory, rounds, left, outcome=_outcome, **settings):
    """A league of 5 bots over ``rounds`` rounds whose directory holds its
    games but the last ``left`` and another, as ``outcome`` ends them."""
    directory.mkdir()
    path = tournament_file(directory, ("a", "b", "c", "d", "e"), rounds=rounds, seed=5, **settings)
    config = load_config(path)
    config.output.mkdir()
    versions = {name: fp.version for name, fp in RunPlan(config, config.output).fingerprints.items()}
    played = make_schedule(config.competition, versions)
    lines = [outcome(spec).to_line() for spec in played[:len(played) - left]]
    # as a run stopped leaves it: a game missing a few before the last, the last few out of order
    del lines[-10]
    (config.output / "games.jsonl").write_bytes(b"".join(lines[:-6] + lines[-3:] + lines[-6:-3]))
    return path, config


def _run(monkeypatch, path, limit=None):
    """``arena run`` of ``path``, its games ending at once as :func:`_outcome`
    says, and its bots taken as started: with no game played, the pre-flight's
    start of every bot (a fork and a bot process each, every run) would be
    most of the CPU of these tests, and it is tests/test_preflight.py's."""
    monkeypatch.setattr(cli, "run_tournament", functools.partial(run_tournament, executor=InstantExecutor(_outcome, limit)))
    monkeypatch.setattr(tournament, "preflight", lambda config, names, logs_dir: [])
    ran = arena("run", path)
    assert ran.exit_code == 0, ran.err
    return ran


def _lines(ran):
    """The progress lines, their times left out."""
    return [re.sub(r"^\[\d+:\d\d:\d\d\] ", "", line) for line in ran.err.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("ranking", ["trueskill", "points", "elo"])
def test_a_resumed_run_shows_the_leader_and_standings_a_run_without_the_index_shows(tmp_path, monkeypatch, ranking):
    carried = []
    for module, name in ((progress, "carried_leader"), (cli, "carried_run_standings")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, functools.partial(lambda real, *a, **k: carried.append(out := real(*a, **k)) or out,
                                                            real))
    # every line's leader computed as it is printed (not a moment behind the games, as a progress view may be)
    monkeypatch.setattr(progress, "Periodic", functools.partial(Periodic, every_s=0.0, share=float("inf")))
    shown = {}
    for way in ("carried", "whole"):  # (in the same directory: the output names it)
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        path, config = _league(tmp_path / "league", 4, 30, ranking=ranking)
        _run(monkeypatch, path, limit=5)  # every record read, the resume kept in the index
        assert arena("standings", path).exit_code == 0  # the standings kept in the index
        _run(monkeypatch, path, limit=5)  # the resume carried on, the standings carried on and kept again
        if way == "whole":
            for index in config.output.glob(f"{INDEX_FILE}*"):
                index.unlink()
        carried.clear()
        ran = _run(monkeypatch, path)
        assert all(out is not None for out in carried) == (way == "carried") and len(carried) == 2
        shown[way] = (_lines(ran), ran.out)
    assert shown["carried"] == shown["whole"]
    assert "leader " in shown["carried"][0][-1] and "forfeit" in shown["carried"][1]


def test_a_resumed_run_reads_no_kept_record_for_its_leader_and_standings(tmp_path, monkeypatch):
    decoded = counted_decodes(monkeypatch)
    read = {}
    for rounds in (3, 12):
        path, _ = _league(tmp_path / f"r{rounds}", rounds, 20)
        _run(monkeypatch, path, limit=5)  # every record read, the resume kept in the index
        assert arena("standings", path).exit_code == 0  # the standings kept in the index
        _run(monkeypatch, path, limit=5)  # the resume carried on, the standings carried on and kept again
        decoded.clear()
        _run(monkeypatch, path, limit=5)
        read[rounds] = len(decoded)
    # The lines the run before added (the plan's), and those this run adds (the standings at its end).
    assert read[3] == read[12] == 10


def test_the_running_leader_carried_from_a_kept_fold_is_the_leader_of_its_games(tmp_path):
    path, config = _league(tmp_path / "league", 3, 0)
    games = [_outcome(spec) for spec in make_schedule(config.competition, {})]
    index_of = FixedSchedule(config.competition).index_of
    for ranking in ("trueskill", "points", "elo"):
        rules = replace(config.competition.rules, ranking=ranking)
        # a gap past the rated games (a game being played when the run stopped), and a later game come early
        kept = [g for g in games if g.index not in (len(games) - 20, len(games) - 1)]
        fold = StandingsFold(config.competition.names, rules, history=False)
        for game in sorted(kept, key=lambda g: g.index):
            fold.add(game, game.index)
        fold.settle(30)  # (the gap among the games not rated)
        carried, folded = RunningLeader.carried(rules, fold, index_of), RunningLeader(rules)
        for game in kept:
            folded.add(game)
        assert carried is not None and carried.leader() == folded.leader() is not None
        for game in (games[-20], games[-1]):  # the gap filled: the games waiting rated
            carried.add(game)
            folded.add(game)
            assert carried.leader() == folded.leader()
    fold = StandingsFold(config.competition.names, config.competition.rules, history=False)
    for game in games[1:]:  # the first game missing among those rated: its leader waits for it
        fold.add(game, game.index)
    fold.settle(8)
    assert RunningLeader.carried(config.competition.rules, fold, index_of) is None


def _unindexed(config):
    for index in config.output.glob(f"{INDEX_FILE}*"):
        index.unlink()


def _resume_kept(path):
    """What a resume keeps in the index, and nothing else (no standings): the plan of a run, no game played."""
    config = load_config(path)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))


@pytest.mark.parametrize("first", ["whole", "kept records"])
def test_a_run_that_read_every_record_keeps_its_standings_for_the_next(tmp_path, monkeypatch, first):
    """Nobody runs ``arena standings``: a run that read every record (the
    first, or one whose kept records something looked at) keeps the
    standings of its end, and the next run reads no kept record."""
    decoded = counted_decodes(monkeypatch)
    read = {}
    for rounds in (3, 12):
        path, _ = _league(tmp_path / f"r{rounds}", rounds, 20)
        if first == "kept records":
            _resume_kept(path)  # the next run's plan carried on, its records read for the leader
        _run(monkeypatch, path, limit=5)
        decoded.clear()
        _run(monkeypatch, path, limit=5)
        read[rounds] = len(decoded)
    # The lines the run before added (the plan's), and those this run adds (the standings at its end).
    assert read[3] == read[12] == 10


def test_the_standings_a_run_keeps_are_those_every_reader_reads_without_the_index(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "Periodic", functools.partial(Periodic, every_s=0.0, share=float("inf")))
    shown = {}
    for way in ("kept", "whole"):  # (in the same directory: the output names it)
        shutil.rmtree(tmp_path / "league", ignore_errors=True)
        path, config = _league(tmp_path / "league", 4, 30)
        _run(monkeypatch, path, limit=5)  # every record read: the standings of its end kept
        if way == "whole":
            _unindexed(config)
        ran = _run(monkeypatch, path, limit=5)
        if way == "whole":  # (the run kept its standings again: read them anew)
            _unindexed(config)
        standings = arena("standings", path)
        assert standings.exit_code == 0
        shown[way] = (_lines(ran), ran.out, ran.err.splitlines()[-1], standings.out, standings.err)
    assert shown["kept"] == shown["whole"]
    assert "leader " in shown["kept"][0][-1] and "forfeit" in shown["kept"][1]


def _standing_forfeits(spec):
    """:func:`_outcome`, and forfeits that stand under the default replay: a
    bot of the version that could not start, a withdrawn bot's games."""
    if "e" in spec.players:
        return forfeit(spec, "e", "withdrawn")
    if spec.index % 11 == 4:
        return forfeit(spec, spec.players[0], "startup_failure")
    return _outcome(spec)


def test_a_resume_whose_forfeits_stand_under_the_default_replay_reads_no_kept_record(tmp_path, monkeypatch):
    """The forfeits the default replay looks at (of bots that could not
    start, withdrawn, disqualified) are told from what the index keeps:
    those that stand leave the resume carried on."""
    decoded = counted_decodes(monkeypatch)
    read = {}
    for rounds in (3, 12):
        path, _ = _league(tmp_path / f"r{rounds}", rounds, 20, _standing_forfeits, withdrawn="[e]")
        _run(monkeypatch, path, limit=5)  # every record read: the resume and the standings kept
        decoded.clear()
        ran = _run(monkeypatch, path, limit=5)
        read[rounds] = len(decoded)
        assert "startup_failure" in ran.out and "withdrawn" in ran.out and "games again" not in ran.err
    assert read[3] == read[12], read  # (the lines the runs added, withdrawn games' forfeits with them)
