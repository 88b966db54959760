"""A league that changes while it runs, through the ``arena`` command.

A results directory describes itself: standings, report and replays read the
same from the directory, its ``games.jsonl`` and the tournament file, for
every format and opening suite.  Bots join, leave, move in the file and
change version without replaying what was played, and nothing is deleted.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from arena.results.store import ResultsStore
from builders import BOTS, RANDOM_SCRIPT, ROOT, arena, assert_one_line_error, league_file, played, readings, records

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def assert_read_alike(directory: Path, yaml: Path | None, game_id: str) -> dict:
    results = [readings(t, game_id) for t in (directory, directory / "games.jsonl", *([yaml] if yaml else []))]
    for other in results[1:]:
        assert other == results[0]
    return json.loads(results[0][0])


@pytest.mark.parametrize("setup", ["generated-suite", "suite-file", "gauntlet", "reference"])
def test_standings_report_and_show_read_alike_from_the_directory_its_games_and_the_file(tmp_path, setup):
    extra = {
        "generated-suite": "openings: {plies: 2, count: 3}\n",  # 3 openings, OXONO has 2 start positions
        "suite-file": "openings: {file: suite.txt}\n",
        "gauntlet": "format: gauntlet\nopenings: {plies: 1, count: 2}\n",
        "reference": "format: reference\nreference: [ann]\nopenings: {plies: 2, count: 2}\n",
    }[setup]
    (tmp_path / "suite.txt").write_text("Xd3 d2, Oc4 b4\nXc4 b4, Od5 d6, Xc5 c6\n1: Xd5 d6, Oc4 b4\n")
    path = league_file(tmp_path, ["ann", "bob", "cy"], extra=extra)
    run = arena("run", path)
    assert run.exit_code == 0, run.err
    games = records(tmp_path / "out")
    last = max(games, key=lambda r: int(r["game_id"].rpartition("-g")[2]))  # beyond the start positions
    data = assert_read_alike(tmp_path / "out", path, last["game_id"])
    assert data["total_games"] == len(games) == {"generated-suite": 18, "suite-file": 18, "gauntlet": 8,
                                                 "reference": 8}[setup]
    read_back = arena("standings", tmp_path / "out")
    assert "warning" not in read_back.err and "ignored" not in read_back.err
    if setup == "reference":
        assert data["reference"] == ["ann"] and sorted(data["entrants"]) == ["bob", "cy"]
        assert "Against the reference bots" in read_back.out


def test_a_match_and_an_sprt_match_read_alike(tmp_path):
    plain = tmp_path / "m"
    match = arena("match", "python -m bots.random_bot", "python -m bots.greedy", "-n", "12", "--seed", "4",
                  "--openings", "plies=2,count=3", "--output", plain)
    assert match.exit_code == 0, match.err
    assert assert_read_alike(plain, None, "r2-greedy~random_bot-g2")["total_games"] == 12
    sprt = tmp_path / "s"
    test = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "-n", "200", "--seed", "2",
                 "--openings", "plies=2,count=5", "--sprt", "elo0=0,elo1=200", "--output", sprt)
    assert test.exit_code == 0, test.err
    data = assert_read_alike(sprt, None, records(sprt)[0]["game_id"])
    assert data["sprt"]["verdict"] == "H1" and data["total_games"] == len(records(sprt))
    assert data["sprt"]["pairs"] == len(records(sprt)) // 2


def test_a_bot_joins_leaves_and_moves_without_disturbing_the_games_played(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"], extra="openings: {plies: 2, count: 2}\n")
    assert played(arena("run", path)) == 12
    before = {r["game_id"]: (r["seed"], r["players"]) for r in records(tmp_path / "out")}

    joined = arena("run", league_file(tmp_path, ["ann", "dee", "bob", "cy"], extra="openings: {plies: 2, count: 2}\n"))
    assert joined.exit_code == 0, joined.err
    assert played(joined) == 12  # dee's 3 pairs x 2 openings x 2 colours, nothing else
    after = records(tmp_path / "out")
    assert {r["game_id"]: (r["seed"], r["players"]) for r in after if "dee" not in r["players"].values()} == before
    assert all("dee" in r["players"].values() for r in after[12:])

    reordered = arena("run", league_file(tmp_path, ["cy", "bob", "dee", "ann"], extra="openings: {plies: 2, count: 2}\n"))
    assert played(reordered) == 0
    left = arena("run", league_file(tmp_path, ["cy", "dee", "ann"], extra="openings: {plies: 2, count: 2}\n"))
    assert played(left) == 0
    line = "warning: 12 games of bots no longer in the tournament are left out of the ranking (kept in games.jsonl): bob (12)"
    assert line in left.err.splitlines()
    assert len(records(tmp_path / "out")) == 24
    withdrawn = next(r["game_id"] for r in records(tmp_path / "out") if "bob" in r["players"].values())
    assert arena("show", tmp_path / "out", withdrawn, "--final").exit_code == 0  # still there to be shown
    standings = json.loads(arena("standings", tmp_path / "out", "-f", "json").out)
    assert sorted(b["name"] for b in standings["bots"]) == ["ann", "cy", "dee"] and standings["total_games"] == 12


def test_a_changed_bot_stops_the_run_then_replay_or_keep(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"])
    assert played(arena("run", path)) == 12
    before = records(tmp_path / "out")
    old_version = before[0]["versions"][next(c for c, n in before[0]["players"].items())]
    with open(tmp_path / "bob.py", "a") as script:
        script.write("# fixed\n")
    stopped = arena("run", path)
    line = assert_one_line_error(stopped, "bot 'bob' (bob.py changed; 8 games by version", "nothing was played",
                                 "--replay bob", "--keep bob")
    assert records(tmp_path / "out") == before

    replayed = arena("run", path, "--replay", "bob")
    assert replayed.exit_code == 0, replayed.err
    assert played(replayed) == 8
    archived = records(tmp_path / "out", "replaced.jsonl")
    assert sorted(a["record"]["game_id"] for a in archived) == sorted(r["game_id"] for r in before if "bob" in r["players"].values())
    assert {a["reason"] for a in archived} == {"--replay bob"}
    now = records(tmp_path / "out")
    assert Counter(r["game_id"] for r in now) == Counter(r["game_id"] for r in before)
    bob_versions = {r["versions"][c] for r in now for c, n in r["players"].items() if n == "bob"}
    assert len(bob_versions) == 1 and old_version not in bob_versions
    assert played(arena("run", path)) == 0

    with open(tmp_path / "cy.py", "a") as script:
        script.write("# tuned\n")
    assert_one_line_error(arena("run", path), "bot 'cy'")
    kept = arena("run", path, "--keep", "cy")
    assert kept.exit_code == 0 and played(kept) == 0
    assert re.search(r"^\s+\d+\s+cy\s.*[0-9a-f]{8} \(\+8 by earlier\)$", kept.out, re.M), kept.out
    again = arena("run", path)  # kept once, kept for good
    assert again.exit_code == 0 and played(again) == 0
    standings = json.loads(arena("standings", tmp_path / "out", "-f", "json").out)
    cy = next(b for b in standings["bots"] if b["name"] == "cy")
    assert list(cy["versions"].values()) == [8] and cy["version"] not in cy["versions"]  # played by the old one only
    assert_one_line_error(arena("run", path, "--replay", "nobody"), "--replay: no bot named 'nobody'")


def submission(folder: Path, manifest: str, *, bot: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(RANDOM_SCRIPT, folder / "bot.py")
    if bot:
        (folder / "bot.py").write_text((folder / "bot.py").read_text() + bot)
    (folder / "bot.yaml").write_text(manifest)


def test_bots_from_a_folder_of_submissions(tmp_path):
    teams = tmp_path / "submissions"
    for team in ("team-a", "team-b", "team-c"):
        submission(teams / team, "cmd: python bot.py\n")
    submission(teams / "team-d", "cmd: [python, bot.py\n")  # a broken manifest
    path = tmp_path / "course.yaml"
    path.write_text("name: course\ngame: oxono\ntime_control: 10+0.1\nconcurrency: 2\noutput: out\n"
                    "bots_from: submissions\n")
    stopped = arena("run", path)
    assert_one_line_error(stopped, "bot 'team-d': ", "submissions/team-d/bot.yaml:2: bad YAML")
    path.write_text(path.read_text() + "startup_failures: forfeit\n")
    first = arena("run", path)
    assert first.exit_code == 0, first.err
    assert played(first) == 24
    forfeits = [r for r in records(tmp_path / "out") if r["forfeit_by"]]
    assert len(forfeits) == 12 and all(r["players"][r["forfeit_by"]] == "team-d" for r in forfeits)
    assert all(r["reason"] == "startup_failure" for r in forfeits)

    submission(teams / "team-e", "name: late-team\ncmd: python bot.py\nversion: '1'\n")  # a late entry
    (teams / "team-d" / "bot.yaml").write_text("cmd: python bot.py\n")  # fixed
    late = arena("run", path)
    assert late.exit_code == 0, late.err
    assert played(late) == 12 + 16  # team-d's forfeits again, late-team's 4 pairs
    assert not any(r["forfeit_by"] for r in records(tmp_path / "out"))
    assert {r["versions"][c] for r in records(tmp_path / "out") for c, n in r["players"].items() if n == "late-team"} == {"1"}

    (teams / "team-b" / "bot.py").write_text((teams / "team-b" / "bot.py").read_text() + "# v2\n")  # changed
    assert_one_line_error(arena("run", path), "bot 'team-b' (bot.py changed", "--replay team-b")
    shutil.rmtree(teams / "team-c")  # withdrawn
    replayed = arena("run", path, "--replay", "team-b")
    assert replayed.exit_code == 0, replayed.err
    assert played(replayed) == 12  # team-b against a, d and late-team
    # team-b's 4 games against team-c are archived too: played again by its new version if team-c comes back.
    assert "12 games of bots no longer in the tournament are left out of the ranking (kept in games.jsonl): team-c (12)" in replayed.err
    assert len(records(tmp_path / "out")) == 24 + 12  # team-b's 16 replaced games archived, 12 new in their place
    archived = records(tmp_path / "out", "replaced.jsonl")
    assert Counter(a["reason"] for a in archived) == {"--replay-forfeits startup_failure": 12, "--replay team-b": 16}


def test_a_team_that_cannot_start_is_not_retried_on_each_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the organiser runs the course from: the folder is named from there
    teams = tmp_path / "submissions"
    for team in ("team-a", "team-b"):
        submission(teams / team, "cmd: python bot.py\n")
    submission(teams / "team-x", "cmd: ./bot\n")  # never built
    path = tmp_path / "course.yaml"
    path.write_text("name: course\ngame: oxono\ntime_control: 10+0.1\nconcurrency: 2\noutput: out\n"
                    "startup_failures: forfeit\nbots_from: submissions\n")
    assert played(arena("run", path)) == 12
    forfeits = [r for r in records(tmp_path / "out") if r["forfeit_by"]]
    assert len(forfeits) == 8 and {r["detail"] for r in forfeits} == {"./bot not found in submissions/team-x (not built?)"}
    games, archive = tmp_path / "out" / "games.jsonl", tmp_path / "out" / "replaced.jsonl"
    before = games.read_bytes()
    for _ in range(2):
        again = arena("run", path)
        assert again.exit_code == 0 and played(again) == 0, again.err
        assert not archive.exists() and games.read_bytes() == before
    asked = arena("run", path, "--replay", "team-x")  # asked for: tried again
    assert played(asked) == 8 and len(records(tmp_path / "out", "replaced.jsonl")) == 8
    (teams / "team-x" / "bot").write_text(f"#!/bin/sh\nexec {sys.executable} bot.py\n")  # built: a new version
    (teams / "team-x" / "bot").chmod(0o755)
    built = arena("run", path)
    assert played(built) == 8, built.err
    assert not any(r["forfeit_by"] for r in records(tmp_path / "out"))
    assert Counter(a["reason"] for a in records(tmp_path / "out", "replaced.jsonl")) == {
        "--replay team-x": 8, "--replay-forfeits startup_failure": 8}


def test_kill_9_in_the_middle_of_a_replay_leaves_every_game_once_and_the_archive_whole(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"], extra="openings: {plies: 2, count: 3}\n", concurrency=1)
    assert played(arena("run", path)) == 18
    before = records(tmp_path / "out")
    bob_games = sorted(r["game_id"] for r in before if "bob" in r["players"].values())
    # bob's new version thinks 100 ms a move, so its 12 games (about 7 s) are still being played when it is killed
    (tmp_path / "bob.py").write_text(
        f"import runpy, sys\nsys.argv[1:] = ['0.1']\nsys.path.insert(0, {str(BOTS)!r})\n"
        f"runpy.run_path({str(BOTS / 'slow.py')!r}, run_name='__main__')\n")
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--replay", "bob"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    games, archive = tmp_path / "out" / "games.jsonl", tmp_path / "out" / "replaced.jsonl"
    deadline, replaced = time.monotonic() + 60, False
    while time.monotonic() < deadline:
        lines = len(games.read_bytes().splitlines())
        # bob's games leave games.jsonl (after the archive has them), then come back one by one
        replaced = replaced or (archive.exists() and lines < len(before))
        if replaced and lines >= len(before) - len(bob_games) + 3:
            break
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    # A kill in the middle of a write leaves a torn last line, which the next run drops.
    middle = [r.game_id for r in ResultsStore(tmp_path / "out").load().records]
    assert len(before) - len(bob_games) + 3 <= len(middle) < len(before)  # killed in the middle of the replay
    assert len(set(middle)) == len(middle)
    assert sorted(json.loads(line)["record"]["game_id"] for line in archive.read_text().splitlines()) == bob_games
    finish = arena("run", path)  # no --replay: the rest of the replay is simply what is missing
    assert finish.exit_code == 0, finish.err
    after = records(tmp_path / "out")
    assert sorted(r["game_id"] for r in after) == sorted(r["game_id"] for r in before)
    assert len(archive.read_text().splitlines()) == len(bob_games)


def test_results_written_by_version_0_1_read_and_resume_as_they_were_played(tmp_path):
    # Written by Totem Arena 0.1: game ids number pairs by position, and its
    # tournament.json holds the opening suite's count and digest, not its moves.
    shutil.copytree(ROOT / "tests" / "data" / "results-0.1", tmp_path / "old")
    out, yaml = tmp_path / "old" / "out", tmp_path / "old" / "legacy.yaml"
    assert "suite" not in json.loads((out / "tournament.json").read_text())["openings"]
    beyond_the_start_positions = "r1-p3-g6"
    data = assert_read_alike(out, yaml, beyond_the_start_positions)
    assert data["total_games"] == 18 == len(records(out))
    assert "warning" not in arena("standings", out).err
    resumed = arena("run", yaml)
    assert resumed.exit_code == 0, resumed.err
    assert played(resumed) == 0 and "18 resumed" in resumed.err
    assert json.loads((out / "tournament.json").read_text())["game_ids"] == "positions"
    again = assert_read_alike(out, yaml, beyond_the_start_positions)
    assert [(b["name"], b["rating"]) for b in again["bots"]] == [(b["name"], b["rating"]) for b in data["bots"]]


def as_written(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A line of a page's shell block, run from the current directory: an
    ``arena`` command in this process (the command line is a thin layer over
    what it calls, and a process of its own would cost more CPU than most of
    these commands; the installed ``arena`` is tests/test_first_contact.py's),
    any other line by bash."""
    words = shlex.split(command, comments=True)
    if words[0] != "arena":
        return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    ran = arena(*words[1:])
    return subprocess.CompletedProcess(words, ran.exit_code, ran.out, ran.err)


def test_the_league_page_runs_as_written(tmp_path, monkeypatch):
    """docs/league.md's commands, in order, from a copy of the repository's
    tournaments (the staff bots run from the root, as in the repository)."""
    shutil.copytree(ROOT / "tournaments", tmp_path / "tournaments")
    for package in ("bots", "engine"):
        (tmp_path / package).symlink_to(ROOT / package)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    page = (ROOT / "docs" / "league.md").read_text()
    commands = [line for block in re.findall(r"^```sh\n(.*?)^```", page, re.M | re.S)
                for line in block.splitlines() if line.strip() and not line.startswith("#")]
    outputs = []
    for command in commands:
        done = as_written(command, env)
        expected = 2 if "# stops" in command else 0
        assert done.returncode == expected, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        outputs.append(done)
    out = tmp_path / "results" / "course"
    runs = [o for c, o in zip(commands, outputs) if c.startswith("arena run")]
    assert "48 games played, 0 resumed" in runs[0].stderr
    assert "16 games played, 48 resumed" in runs[1].stderr  # the late team's only
    assert "bot 'team-bob' (bot.py changed; 16 games by version" in runs[2].stderr
    assert "16 games played, 48 resumed" in runs[3].stderr  # team-bob's again
    assert "left out of the ranking (kept in games.jsonl): team-cy (16)" in runs[4].stderr
    assert "1 games played, 47 resumed" in runs[5].stderr  # the disputed game again
    assert len(records(out)) == 64
    archived = records(out, "replaced.jsonl")
    assert Counter(a["reason"] for a in archived) == {"--replay team-bob": 16, "--replay-game": 1}
    assert next(a for a in archived if a["reason"] == "--replay-game")["record"]["game_id"] == "r1-staff-greedy~team-ann-g3"
    assert (tmp_path / "results" / "course-report.html").stat().st_size > 10_000
    published = next(o for c, o in zip(commands, outputs) if c.startswith("arena standings")).stdout
    assert "Against the reference bots" in published and "team-cy" not in published


def test_a_submission_stays_one_version_though_running_it_writes_byte_code_in_its_folder(tmp_path):
    for team in ("team-a", "team-b"):
        submission(tmp_path / "subs" / team, "cmd: python bot.py\n")
        (tmp_path / "subs" / team / "helper.py").write_text("X = 1\n")
        (tmp_path / "subs" / team / "bot.py").write_text("import helper\n" + (tmp_path / "subs" / team / "bot.py").read_text())
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ngame: oxono\ntime_control: 10+0.1\noutput: out\nbots_from: subs\n")
    assert played(arena("run", path)) == 4
    assert (tmp_path / "subs" / "team-a" / "__pycache__").is_dir()
    again = arena("run", path)
    assert again.exit_code == 0 and played(again) == 0, again.err


def test_a_run_stopped_before_its_replay_archived_anything_names_the_version_that_played(tmp_path):
    path = league_file(tmp_path, ["ann", "bob"])
    assert played(arena("run", path)) == 4
    (tmp_path / "bob.py").write_text((tmp_path / "bob.py").read_text() + "# v2\n")
    path.write_text(path.read_text().replace("seed: 11\n", "seed: 11\nstartup_timeout: 0.001\n"))
    assert arena("run", path, "--replay", "bob").exit_code == 2  # the pre-flight fails: nothing replaced
    assert not (tmp_path / "out" / "replaced.jsonl").exists()
    path.write_text(path.read_text().replace("startup_timeout: 0.001\n", ""))
    stopped = arena("run", path)
    line = assert_one_line_error(stopped, "bot 'bob' (bob.py changed; 4 games by version")
    assert "version changed from" not in line
    standings = json.loads(arena("standings", tmp_path / "out", "-f", "json").out)
    assert all(bot["version"] in bot["versions"] for bot in standings["bots"])  # no version yet played none


def test_a_decided_sprt_still_plays_a_replayed_bots_games_again(tmp_path):
    path = league_file(tmp_path, ["ann", "bob"], extra="sprt: {elo0: 0, elo1: 200, alpha: 0.3, beta: 0.3}\nrounds: 20\n")
    first = arena("run", path)
    assert first.exit_code == 0 and "the SPRT is decided" in first.err, first.err
    count = len(records(tmp_path / "out"))
    (tmp_path / "bob.py").write_text((tmp_path / "bob.py").read_text() + "# v2\n")
    again = arena("run", path, "--replay", "bob")
    assert again.exit_code == 0, again.err
    assert len((tmp_path / "out" / "replaced.jsonl").read_text().splitlines()) == count
    assert played(again) >= 2


def test_a_kept_version_stays_kept_when_its_bot_leaves_and_comes_back(tmp_path):
    path = league_file(tmp_path, ["ann", "bob", "cy"])
    assert played(arena("run", path)) == 12
    (tmp_path / "cy.py").write_text((tmp_path / "cy.py").read_text() + "# v2\n")
    assert arena("run", path, "--keep", "cy").exit_code == 0
    assert played(arena("run", league_file(tmp_path, ["ann", "bob"]))) == 0
    back = arena("run", league_file(tmp_path, ["ann", "bob", "cy"]))
    assert back.exit_code == 0 and played(back) == 0, back.err


def test_results_by_position_refuse_a_bot_in_another_bots_place(tmp_path):
    shutil.copytree(ROOT / "tests" / "data" / "results-0.1", tmp_path / "old")
    yaml = tmp_path / "old" / "legacy.yaml"
    yaml.write_text(yaml.read_text().replace("name: greedy,", "name: newbot,"))
    assert_one_line_error(arena("run", yaml), "hold game 'r1-p1-g", "but the tournament file pairs")


def test_a_declared_version_is_its_text_and_env_values_stay_out_of_the_results(tmp_path):
    path = league_file(tmp_path, ["ann", "bob"])
    path.write_text(path.read_text().replace("cmd: python bob.py}", "cmd: python bob.py, version: 1.10, env: {TOKEN: s3cret}}"))
    assert arena("run", path).exit_code == 0
    assert {r["versions"][c] for r in records(tmp_path / "out") for c, n in r["players"].items() if n == "bob"} == {"1.10"}
    assert "s3cret" not in (tmp_path / "out" / "tournament.json").read_text()
    path.write_text(path.read_text().replace("version: 1.10", "version: null"))
    assert_one_line_error(arena("run", path), "version", "must be a short")


def test_bots_from_names_clashes_and_takes_absolute_globs(tmp_path):
    for team in ("team-ann", "team-bob"):
        submission(tmp_path / "subs" / team, "cmd: python bot.py\n")
    submission(tmp_path / "subs" / "team-cy", "name: team-ann\ncmd: python bot.py\n")  # claims another's name
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\ngame: oxono\ntime_control: 10+0.1\noutput: out\nstartup_failures: forfeit\n"
                    f"bots_from: {tmp_path / 'subs'}/team-*\n")
    run = arena("run", path)
    assert run.exit_code == 0, run.err
    assert "team-cy/bot.yaml: the name 'team-ann' is taken by the folder" in run.err
    forfeits = {r["players"][r["forfeit_by"]] for r in records(tmp_path / "out") if r["forfeit_by"]}
    assert forfeits == {"team-cy"}


def test_a_match_resumed_with_a_smaller_limit_reads_as_it_played(tmp_path):
    args = ("match", "python -m bots.random_bot", "python -m bots.greedy", "--seed", "3", "-o", tmp_path / "m")
    assert arena(*args, "-n", "10").exit_code == 0
    again = arena(*args, "-n", "9")
    assert again.exit_code == 0 and "resuming: 10 of 10 games" in again.err, again.err
    read = arena("standings", tmp_path / "m", "-f", "json")
    assert json.loads(read.out)["total_games"] == 10 and "warning" not in read.err


@pytest.mark.parametrize("edit", [
    lambda meta: meta.update(openings=[1]),
    lambda meta: meta.update(bots=5),
    lambda meta: meta["bots"][0].update(name=7),
    lambda meta: meta["bots"][0].update(earlier_versions=5),
    lambda meta: meta.update(reference=[1]),
    lambda meta: meta.update(format="swiss"),
    lambda meta: meta.update(rounds=10**9),
])
def test_a_tournament_json_edited_by_hand_is_read_without_a_traceback(tmp_path, edit):
    path = league_file(tmp_path, ["ann", "bob"])
    assert arena("run", path).exit_code == 0
    meta_path = tmp_path / "out" / "tournament.json"
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    for command in (("standings", tmp_path / "out"), ("report", tmp_path / "out"), ("run", path)):
        result = arena(*command)  # no traceback (arena() asserts it); an error is one line
        assert result.exit_code in (0, 2), result.err
        if result.exit_code == 2:
            assert len(result.err.strip().splitlines()) == 1
