"""A results directory is untrusted input (issue 31, holes 2, 3 and 5).

The attacks as the hunt ran them: a symbolic link (or a FIFO) planted at
each file the arena opens in a results directory, pointing outside it at a
stand-in for the organiser's ``~/.bashrc`` or ``/etc/shadow``; then the real
code path.  The file outside never changes, nothing is created outside, the
secret never reaches a page or a terminal, and the arena says so in one line
naming the link.  And a team's own page holds no other team's stderr or
``info``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import engine
from arena.base import safe_files
from arena.bot.process import ArenaWriteError
from arena.base.safe_files import RefusedFile
from arena.bot.stderr_log import StderrLog
from arena.game.positions import start_state
from arena.results.report import write_report
from arena.results.report.data import games_data
from arena.results.meta import MAX_META_BYTES
from arena.results.store import ResultsStore, StoreError
from arena.run.config import load_config
from arena.run.preflight import preflight
from arena.run.results_dir import RunPlan, open_results, read_results
from arena.formats.schedule import make_schedule
from played_games import played_games
from builders import (ROOT, arena, assert_one_line_error, bot_player, fenced, finishes_within, hostile_tournament,
                      record_for, report_page, tournament, tournament_file)

BASHRC = "# the organiser's ~/.bashrc\nexport PATH=$HOME/bin:$PATH\n"
SHADOW = "root:$6$SECRET-HASH-OF-ROOT:19000:0:99999:7:::\n"
LINK = "a symbolic link is in its place; the arena follows no link in a results directory"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The organiser's home, outside the results directory: a ``.bashrc`` and a secret."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(BASHRC)
    (home / "shadow").write_text(SHADOW)
    return home


def untouched(home: Path) -> None:
    """Nothing outside was written, truncated or created."""
    assert sorted(p.name for p in home.iterdir()) == [".bashrc", "shadow"]
    assert (home / ".bashrc").read_text() == BASHRC and (home / "shadow").read_text() == SHADOW


def plant(path: Path, kind: str, home: Path) -> None:
    """At ``path``: a link to the organiser's ``.bashrc`` (``file``), to a file
    not there yet (``dangling``, which a write through it would create), to
    the home folder (``folder``), or a FIFO (``fifo``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to({"file": home / ".bashrc", "dangling": home / "made-by-the-arena", "folder": home}[kind])


def refusal(kind: str) -> str:
    return LINK if kind != "fifo" else "a FIFO is in its place; the arena opens only regular files and folders"


# -- the primitives --------------------------------------------------------------------


@pytest.mark.parametrize("mode", [os.O_APPEND, os.O_TRUNC])  # a worker's log, a game's log
def test_a_file_linked_elsewhere_by_a_hard_link_is_not_written(tmp_path, home, mode):
    os.link(home / ".bashrc", tmp_path / "w1.log")
    with pytest.raises(RefusedFile, match="a file with 2 hard links is in its place"):
        safe_files.open_file(tmp_path, "w1.log", os.O_WRONLY | os.O_CREAT | mode)
    untouched(home)


@pytest.mark.parametrize("kind", ["folder", "dangling"])
def test_a_file_is_written_in_a_folder_reached_through_no_link(tmp_path, home, kind):
    plant(tmp_path / "report.games", kind, home)
    with pytest.raises(RefusedFile, match="report.games is a symbolic link"):
        safe_files.write_atomically_in(tmp_path, "report.games/0000.js", "alert(1)")
    untouched(home)


@pytest.mark.parametrize("kind", ["file", "hard link"])
def test_a_large_reports_file_of_games_replaces_whatever_was_planted_at_its_name(tmp_path, home, kind):
    from arena.results.report import build_report_files
    from builders import results

    records = played_games("oxono", ["ann", "bob"], 4, seed=1)
    page, games = build_report_files(results(records), "report.games/", inline_games=0)
    planted = tmp_path / "report.games" / games.names[0]
    planted.parent.mkdir()
    if kind == "file":
        plant(planted, "file", home)
    else:
        os.link(home / ".bashrc", planted)
    write_report(tmp_path / "report.html", page, games)
    assert not planted.is_symlink() and planted.stat().st_nlink == 1
    assert planted.read_text().partition("\n")[2].startswith("arenaReport.games(")
    untouched(home)


def test_a_temporary_file_has_a_name_nobody_can_guess(tmp_path, home, monkeypatch):
    # The old names were .NAME.<pid>.tmp: 32,768 links covered every pid.
    plant(tmp_path / f".report.html.{os.getpid()}.tmp", "file", home)
    names = set()
    real_replace = os.replace

    def seen(src, dst, **kwargs):
        names.add(src)
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", seen)
    write_report(tmp_path / "report.html", "<!doctype html><p>one</p>")
    write_report(tmp_path / "report.html", "<!doctype html><p>two</p>")
    assert len(names) == 2 and all(len(name) == len(".report.html.") + 16 + len(".tmp") for name in names)
    assert (tmp_path / "report.html").read_text() == "<!doctype html><p>two</p>"
    untouched(home)


# -- hole 2: what the store writes -----------------------------------------------------------


@pytest.fixture
def config(tmp_path):
    return tournament(tmp_path, ("a", "b", "c"), name="store-test", seed=3, output="out")


@pytest.mark.parametrize("kind", ["file", "dangling", "fifo"])
@pytest.mark.parametrize("name", ["games.jsonl", ".lock", "tournament.json", "logs"])
def test_a_link_or_fifo_at_a_results_file_stops_the_run_in_one_line(config, home, name, kind):
    plant(config.output / name, "folder" if name == "logs" and kind == "file" else kind, home)

    def open_it():
        with ResultsStore(config.output) as store:
            open_results(store, RunPlan(config, store.directory))

    error = finishes_within(10, open_it)
    assert isinstance(error, StoreError), error
    assert f"{config.output / name}: {refusal(kind)}" in str(error) and "\n" not in str(error)
    untouched(home)


def test_replacing_records_writes_no_archive_through_a_link(config, home):
    schedule = make_schedule(config.competition)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        for spec in schedule[:4]:
            store.append(record_for(spec))
        plant(config.output / "replaced.jsonl", "file", home)
        with pytest.raises(StoreError) as caught:
            store.replace({schedule[1].game_id: "--replay b"})
    assert str(caught.value) == f"cannot write {config.output / 'replaced.jsonl'}: {LINK}"
    untouched(home)
    assert len(ResultsStore(config.output).load().records) == 4  # nothing lost


@pytest.mark.parametrize("name", ["tournament.json", "games.jsonl", "report.html"])
def test_a_link_at_every_pids_temporary_file_is_never_written_through(config, home, name):
    out = config.output
    out.mkdir()
    for pid in {os.getpid(), os.getppid(), 1}:
        plant(out / f".{name}.{pid}.tmp", "file", home)
    schedule = make_schedule(config.competition)
    with ResultsStore(out) as store:
        plan = RunPlan(config, store.directory)
        open_results(store, plan)  # writes tournament.json
        store.append(record_for(schedule[0]))
        store.append(record_for(schedule[1]))
        store.replace({schedule[0].game_id: "--replay"})  # writes games.jsonl again
    write_report(out / "report.html", "<!doctype html>")
    untouched(home)
    assert not (out / name).is_symlink() and (out / name).is_file()
    assert json.loads((out / "tournament.json").read_text()) == plan.meta.to_json()
    assert [r.game_id for r in ResultsStore(out).load().records] == [schedule[1].game_id]


def test_a_link_in_place_of_scratch_is_removed_not_followed(config, home):
    plant(config.output / "scratch", "folder", home)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
    assert not (config.output / "scratch").exists()
    untouched(home)


# -- hole 2: the bots' logs and scratch directories --------------------------------------------


@pytest.mark.parametrize(("planted", "kind"), [
    ("b/w1.log", "file"), ("b/w1.log", "dangling"), ("b/w1.log", "fifo"), ("b", "folder"),
])
def test_a_link_or_fifo_at_a_workers_log_is_refused(tmp_path, home, planted, kind):
    logs = tmp_path / "out" / "logs"
    plant(logs / planted, kind, home)
    log = StderrLog(logs / "b" / "w1.log", 1000, logs)
    error = finishes_within(10, log.open)
    assert isinstance(error, RefusedFile), error
    assert str(error).startswith(f"{logs / 'b' / 'w1.log'}: ") and "\n" not in str(error)
    assert (f"{logs / planted} is a symbolic link" if planted == "b" else refusal(kind)) in str(error)
    log.write(b"echo pwned\n")
    log.close()
    untouched(home)


@pytest.mark.parametrize(("planted", "kind"), [
    ("b/games/r1-g1.log", "file"), ("b/games/r1-g1.log", "dangling"), ("b/games", "folder"), ("b", "folder"),
])
def test_a_link_at_a_games_log_or_its_folders_is_refused(tmp_path, home, planted, kind):
    logs = tmp_path / "out" / "logs"
    plant(logs / planted, kind, home)
    log = StderrLog(logs / "b" / "w1.log", 1000, logs)
    with pytest.raises(RefusedFile) as caught:
        log.begin_game("r1-g1", "b")
    assert str(caught.value).startswith(f"{logs / 'b' / 'games' / 'r1-g1.log'}: ")
    assert (f"{logs / planted} is a symbolic link" if kind == "folder" else LINK) in str(caught.value)
    log.close()
    untouched(home)


def test_a_link_at_a_preflight_log_stops_the_preflight_in_one_line(tmp_path, home):
    config = load_config(hostile_tournament(tmp_path, ["echo_bot.py"]))
    logs = config.output / "logs"
    plant(logs / "a" / "preflight.log", "dangling", home)
    with pytest.raises(ArenaWriteError) as caught:
        preflight(config, ["a"], logs)
    assert str(caught.value) == f"cannot open log file '{logs / 'a' / 'preflight.log'}': {LINK}"
    untouched(home)


def test_a_link_at_a_bots_scratch_directory_is_refused(tmp_path, home):
    scratch = tmp_path / "out" / "scratch"
    plant(scratch / "r.w1", "folder", home)
    player = bot_player("r", (sys.executable, "-m", "bots.random_bot"), scratch_dir=scratch / "r.w1")
    with pytest.raises(ArenaWriteError) as caught:
        player.ensure_started()
    player.close()
    assert str(caught.value) == f"cannot make the scratch directory '{scratch / 'r.w1'}': {LINK}"
    untouched(home)


@pytest.mark.usefixtures("no_leaked_processes")
def test_arena_run_with_links_at_the_workers_logs_stops_in_one_line(tmp_path, home):
    # The hunt's attack: a bot's stderr appended to the organiser's ~/.bashrc.
    path = tournament_file(tmp_path)
    out = tmp_path / "out"
    for bot in ("alpha", "beta", "gamma"):
        for worker in (1, 2):
            plant(out / "logs" / bot / f"w{worker}.log", "file" if worker == 1 else "dangling", home)
    result = arena("run", path)
    assert result.exit_code == 2 and result.out == ""
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors == result.err.splitlines()[-1:], result.err
    assert errors[0].startswith(f"error: cannot open log file '{out / 'logs'}/") and errors[0].endswith(LINK)
    untouched(home)


# -- hole 3: what the readers read --------------------------------------------------------------


def results_with_logs(out: Path) -> list:
    """A results directory of 6 games, with each bot's log of each game."""
    records = played_games("oxono", ["a", "b"], 6, seed=2, forfeit_every=2)
    out.mkdir(parents=True)
    (out / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records))
    (out / "tournament.json").write_text(json.dumps({"name": "cup", "game": "oxono", "bots": [{"name": "a"}, {"name": "b"}]}))
    for record in records:
        for name in ("a", "b"):
            path = out / "logs" / name / "games" / f"{record.game_id}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{name}'s own stderr in {record.game_id}\n")
    return records


@pytest.mark.parametrize("planted", ["logs/b/games/r1-g1.log", "logs/b/games", "logs/b", "logs"])
def test_a_log_linked_to_a_secret_is_not_shown_by_show_nor_the_report(tmp_path, home, planted):
    out = tmp_path / "out"
    records = results_with_logs(out)
    linked = out / planted
    os.rename(linked, tmp_path / "moved")
    if planted.endswith(".log"):
        linked.symlink_to(home / "shadow")
    else:  # a folder holding the same names, outside, with the secret in place of the log
        secret = home / "logs-copy" / "b" / "games" / "r1-g1.log"
        secret.parent.mkdir(parents=True)
        secret.write_text(SHADOW)
        linked.symlink_to(secret.parents[{"logs/b/games": 0, "logs/b": 1, "logs": 2}[planted]])
    shown = arena("show", out, "r1-g1")
    assert shown.exit_code == 0, shown.err
    assert "SECRET" not in shown.out
    assert f"stderr of b: not read: {planted} is a symbolic link" in shown.out
    if planted != "logs":  # the other bot's log is read as before
        assert "a's own stderr in r1-g1" in shown.out
    page = report_page(records, {"game": "oxono", "bots": []}, results_dir=out, bot="b")
    assert "SECRET" not in page and f"not read: {planted} is a symbolic link" in page
    assert "SECRET" not in report_page(records, {"game": "oxono", "bots": []}, results_dir=out)


def security_page_quotes() -> list[str]:
    """The lines docs/security.md quotes in its section on results directories."""
    page = (ROOT / "docs" / "security.md").read_text()
    section = page[page.index("## Results directories are untrusted input"):]
    return [body.strip() for lang, body in fenced(section) if lang == ""]


def test_a_fifo_in_place_of_a_log_does_not_hang_show_and_is_said_as_the_docs_say(tmp_path):
    out = tmp_path / "out"
    records = results_with_logs(out)
    (out / "logs" / "b" / "games" / "r1-g1.log").unlink()
    os.mkfifo(out / "logs" / "b" / "games" / "r1-g1.log")
    from arena.results.show import stderr_tails

    text = finishes_within(10, stderr_tails, records[1], out)
    assert security_page_quotes()[1] in text.splitlines()


@pytest.mark.parametrize("name", ["games.jsonl", "tournament.json"])
@pytest.mark.parametrize("kind", ["link", "fifo", "sparse"])
def test_a_games_or_tournament_file_that_is_a_link_a_fifo_or_huge_is_one_line(tmp_path, home, name, kind):
    out = tmp_path / "out"
    results_with_logs(out)
    path = out / name
    path.unlink()
    if kind == "link":
        path.symlink_to(home / "shadow")
        why = LINK
    elif kind == "fifo":
        os.mkfifo(path)
        why = "a FIFO is in its place"
    else:  # a sparse file claims any size for nothing
        path.touch()
        os.truncate(path, ((1 << 31) if name == "games.jsonl" else MAX_META_BYTES) + 1)
        why = "more than the"
    error = finishes_within(10, read_results, out)
    if kind == "sparse" and name == "games.jsonl":  # the log is streamed, its holes jumped: read, not refused
        assert not isinstance(error, Exception) and error.records == [], error
        assert f"{path}: dropped a torn last line ({(1 << 31) + 1} bytes)" in "\n".join(error.warnings)
        return
    assert isinstance(error, StoreError) and f"cannot read {path}: " in str(error) and why in str(error), error
    if kind == "link" and name == "games.jsonl":  # as docs/security.md quotes it
        line = assert_one_line_error(arena("standings", out))
        assert line == security_page_quotes()[0].replace("DIR", str(out))
    untouched(home)


# -- hole 5: a team's page holds no other team's stderr or info ----------------------------------


def test_a_teams_page_shows_the_opponents_forfeit_reason_only_and_its_own_info(tmp_path):
    game = engine.get_game("oxono")
    records = played_games("oxono", ["team-a", "team-b"], 8, seed=4, forfeit_every=2)
    for record in records:
        first = game.to_move(start_state(record))
        for ply, move in enumerate(record.moves, start=1):
            mover = record.players[game.colors[(first + ply - 1) % 2]]
            move.info = {"note": f"{mover}-INFO-{record.game_id}-{ply}"}
        if record.forfeit_by is not None:
            loser = record.players[record.forfeit_by]
            record.reason = "crash"
            record.detail = f"exited with code 1; stderr ends with: {loser}-STDERR-{record.game_id}"
    forfeits_of = {name: [r for r in records if r.forfeit_by and r.players[r.forfeit_by] == name]
                   for name in ("team-a", "team-b")}
    assert forfeits_of["team-a"] and forfeits_of["team-b"]
    page = report_page(records, {"game": "oxono", "bots": []}, bot="team-a")
    assert "team-b-STDERR" not in page and "team-b-INFO" not in page
    assert all(f"team-a-STDERR-{r.game_id}" in page for r in forfeits_of["team-a"])
    assert "team-a-INFO" in page
    data = games_data(game, records, ["team-a", "team-b"], only_bot="team-a")
    for record, entry in zip(sorted(records, key=lambda r: r.index), data["games"]):
        if record in forfeits_of["team-b"]:
            assert entry["r"] == "crash" and "d" not in entry  # the reason, and only that
            assert data["bots"][entry["p"][entry["f"]]] == "team-b"
    # The whole report, the organiser's, keeps everything.
    whole = report_page(records, {"game": "oxono", "bots": []})
    assert "team-b-STDERR" in whole and "team-b-INFO" in whole


def test_arena_match_resuming_into_a_directory_with_a_linked_tournament_file_is_one_line(tmp_path, home):
    out = tmp_path / "out"
    plant(out / "tournament.json", "file", home)
    result = arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "-o", out)
    assert_one_line_error(result, f"cannot read {out / 'tournament.json'}: {LINK}")
    untouched(home)
