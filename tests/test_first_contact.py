"""What a new user meets first, through the command line: bots that cannot
start, results that are damaged or elsewhere, disks that refuse to write,
files that cost too much, signals, and the help.

Every failure here is one line (``error: ...``), never a traceback, and never
costs a result already written.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena.results.store as store_module
from arena.run.config import ConfigError, parse_config
from builders import (ANSI, BOTS, ROOT, arena, assert_one_line_error, finishes_within, records, slow_tournament,
                      tournament_file)

pytestmark = pytest.mark.usefixtures("no_leaked_processes", "in_repo_root")

BROKEN_START = "python no_such_script_xyz.py"
NO_HELLO = f"python {BOTS / 'no_hello.py'}"
NON_JSON = f"python {BOTS / 'non_json.py'}"


def no_temporary_files(directory: Path) -> None:
    assert not [p for p in directory.rglob("*") if p.name.endswith(".tmp")]


# -- a bot that cannot start -----------------------------------------------------


def test_a_bot_that_never_answers_hello_stops_the_run_once_with_the_flush_hint(tmp_path):
    path = tournament_file(tmp_path, cmds={"beta": NO_HELLO, "gamma": NO_HELLO}, extra="startup_timeout: 1\n")
    line = assert_one_line_error(
        arena("run", path),
        "bot 'beta' did not start, so no game was played: no answer to 'hello' within 1 s (startup_timeout, --startup-timeout) "
        "— does the bot flush its output after each line?",
    )
    # both were started at once, in the pre-flight, and both are named
    assert "bot 'gamma' did not start either: no answer to 'hello' within 1 s" in line
    assert (tmp_path / "out" / "games.jsonl").read_bytes() == b""


def test_startup_failure_forfeits_are_played_again_once_the_bot_is_fixed(tmp_path):
    path = tournament_file(tmp_path, cmds={"gamma": BROKEN_START}, extra="startup_failures: forfeit\n")
    first = arena("run", path)
    assert first.exit_code == 0, first.err
    assert sum(r["reason"] == "startup_failure" for r in records(tmp_path / "out")) == 8
    # the first detail of each bot's forfeits under the table, and where to find them all
    assert f"Forfeits (the first of each bot; all of them: arena standings {path} --forfeits)" in first.out
    assert re.search(r"^  gamma  r1-alpha~gamma-g1  startup_failure at start-up: bad answer to 'hello': .*\(\+7 more\)$",
                     first.out, re.M), first.out
    every = arena("standings", tmp_path / "out", "--forfeits")
    assert every.exit_code == 0
    listed = every.out[every.out.index("\nForfeits\n"):].strip().splitlines()[1:]
    assert len(listed) == 8 and all(line.startswith("  gamma  r") for line in listed)

    path.write_text(path.read_text().replace(BROKEN_START, "python -m bots.random_bot"))  # a changed cmd: no conflict
    fixed = arena("run", path)
    assert fixed.exit_code == 0, fixed.err
    assert "resuming: 4 of 12 games already in" in fixed.err and "playing 8 forfeited games again" in fixed.err
    assert "8 games played, 4 resumed" in fixed.err
    final = records(tmp_path / "out")
    assert len(final) == len({r["game_id"] for r in final}) == 12
    assert not any(r["reason"] == "startup_failure" for r in final)


def test_replay_forfeits_chooses_the_reasons(tmp_path):
    path = tournament_file(tmp_path, bots=("alpha", "beta"), cmds={"beta": NON_JSON})
    assert arena("run", path).exit_code == 0
    assert [r["reason"] for r in records(tmp_path / "out")] == ["protocol_error"] * 4
    path.write_text(path.read_text().replace(NON_JSON, "python -m bots.random_bot"))
    # beta is another version now: its old games stay only when asked to (and by
    # default only startup failures are played again)
    assert_one_line_error(arena("run", path), "bot 'beta' (its command changed", "--keep beta")
    kept = arena("run", path, "--keep", "beta")
    assert kept.exit_code == 0 and "0 games played, 4 resumed" in kept.err
    assert_one_line_error(arena("run", path, "--replay-forfeits", "timeout,slow"), "--replay-forfeits", "'slow'")
    again = arena("run", path, "--replay-forfeits", "timeout,Protocol_Error")
    assert again.exit_code == 0, again.err
    assert "4 games played, 0 resumed" in again.err
    assert not any(r["forfeit_by"] for r in records(tmp_path / "out"))


def test_replay_forfeits_adds_to_the_start_up_failures_unless_none():
    from arena.cli import _reasons

    assert _reasons("timeout,Crash") == {"timeout", "crash", "startup_failure", "withdrawn", "disqualified"}
    assert _reasons("none") == frozenset()


def test_a_game_named_in_capitals_reaches_bots_and_records_in_the_engine_s_spelling(tmp_path):
    result = arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "--game", "YOXII",
                   "--games", "2", "--seed", "3", "--output", str(tmp_path / "m"))
    assert result.exit_code == 0, result.err
    assert {r["game"] for r in records(tmp_path / "m")} == {"yoxii"}
    resumed = arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "--game", "yoxii",
                    "--games", "2", "--seed", "3", "--output", str(tmp_path / "m"))
    assert resumed.exit_code == 0, resumed.err


def test_match_takes_a_startup_timeout_and_stops_on_a_bot_that_cannot_start():
    assert_one_line_error(
        arena("match", "python -m bots.random_bot", NO_HELLO, "--startup-timeout", "0.5", "--seed", "1"),
        "bot 'no_hello' did not start, so no game was played: no answer to 'hello' within 0.5 s (startup_timeout, --startup-timeout) — does the bot flush",
    )
    assert_one_line_error(arena("match", "python -m bots.gredy", "python -m bots.random_bot", "--seed", "1"),
                          "bot 'gredy' did not start", "No module named bots.gredy")


def test_a_script_in_the_current_directory_gets_the_dot_slash_hint(tmp_path, monkeypatch):
    (tmp_path / "perlbot.pl").write_text("#!/bin/sh\n")
    (tmp_path / "perlbot.pl").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    result = arena("check", "perlbot.pl")
    assert result.exit_code == 1
    assert result.out.splitlines() == [
        "FAIL starts and answers 'hello' with 'ready': no such program 'perlbot.pl' on the PATH; "
        f"to run the file 'perlbot.pl' in {tmp_path}, write './perlbot.pl'"
    ]
    path = tournament_file(tmp_path, bots=("alpha", "beta"), cmds={"beta": "perlbot.pl"})
    path.write_text(path.read_text().replace(f"perlbot.pl, cwd: {ROOT}", f"perlbot.pl, cwd: {tmp_path}"))
    assert_one_line_error(arena("run", path), "bots[1].cmd", "write './perlbot.pl'")


@pytest.mark.parametrize("cmd, word", [
    ("python -m bots.random_bot | tee log.txt", "|"),
    ("python -m bots.random_bot > log.txt", ">"),
    ("cd bots && python random_bot.py", "&&"),
])
def test_shell_syntax_in_a_command_says_how_to_use_a_shell(tmp_path, cmd, word):
    path = tournament_file(tmp_path, bots=("alpha", "beta"), cmds={"beta": f'"{cmd}"'})
    line = assert_one_line_error(arena("run", path), "bots[1].cmd", f"shell syntax ({word!r})",
                                 "not run by a shell", "sh -c '")
    # the program python runs as the arena's own interpreter, in a shell too
    shown = sys.executable + cmd[len("python"):] if cmd.startswith("python ") else cmd
    assert line.endswith(f"sh -c '{shown}'")
    checked = arena("check", cmd)
    assert checked.exit_code == 1 and "sh -c '" in checked.out


# -- reading results ------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished 3-bot tournament file (12 games, results in ``out``)."""
    from typer.testing import CliRunner

    from arena.cli import app

    path = tournament_file(tmp_path_factory.mktemp("finished"))
    assert CliRunner().invoke(app, ["run", str(path)]).exit_code == 0
    return path


def test_standings_accepts_the_games_file_and_says_what_it_looked_for(finished, tmp_path):
    out = finished.parent / "out"
    by_dir = arena("standings", out)
    by_file = arena("standings", out / "games.jsonl")
    assert by_file.exit_code == 0 and by_file.out == by_dir.out and "after 12 games" in by_dir.out
    line = assert_one_line_error(arena("standings", finished.parent), "no results in", "itself (no games.jsonl)",
                                 "it holds results directories:")
    assert line.endswith(str(out))


def corrupt(lines: list[dict]) -> list[dict]:
    lines[0]["players"] = "alpha"
    lines[1]["winner"] = "purple"
    lines[2]["game"] = "yoxii"
    lines[3]["moves"][0]["ms"] = "fast"
    lines[4].update(winner="pink", forfeit_by="pink", reason="timeout")
    return lines


def test_records_with_wrong_values_are_skipped_with_their_line_and_played_again(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "tournament.json").write_bytes((finished.parent / "out" / "tournament.json").read_bytes())
    (out / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corrupt(records(finished.parent / "out"))))
    shown = arena("standings", out)
    assert shown.exit_code == 0 and "after 7 games" in shown.out
    warnings = shown.err.splitlines()
    assert len(warnings) == 5
    for number, words in enumerate(["bad players 'alpha'", "bad winner 'purple'", "another game ('yoxii'",
                                    "bad move time 'fast'", "the winner of a forfeit is the other colour"], start=1):
        assert warnings[number - 1].startswith(f"warning: {out / 'games.jsonl'}:{number}: skipped")
        assert words in warnings[number - 1]

    path = tournament_file(tmp_path)
    resumed = arena("run", path)
    assert resumed.exit_code == 0, resumed.err
    assert "5 games played, 7 resumed" in resumed.err
    final = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(final) == 17  # the 5 bad lines stay, skipped, beside the games played again
    assert "after 12 games" in arena("standings", out).out


def test_standings_ignores_a_game_the_tournament_does_not_schedule(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "tournament.json").write_bytes((finished.parent / "out" / "tournament.json").read_bytes())
    games = records(finished.parent / "out")
    games[0]["game_id"] = "r1-p9-g1"
    (out / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in games))
    result = arena("standings", out)
    assert result.exit_code == 0 and "after 11 games" in result.out
    assert result.err.splitlines() == [
        f"warning: ignored game 'r1-p9-g1' ({' vs '.join(games[0]['players'].values())}): "
        "this tournament does not schedule it"
    ]


def test_csv_is_one_table_and_formats_take_any_case(finished):
    out = finished.parent / "out"
    ranking = list(csv.reader(io.StringIO(arena("standings", out, "-f", "CSV").out)))
    assert ranking[0][:2] == ["#", "bot"] and len(ranking) == 4
    h2h = list(csv.reader(io.StringIO(arena("standings", out, "-f", "csv", "--table", "crosstable").out)))
    assert h2h[0][0] == "bot" and len(h2h) == 4 and all(len(row) == 4 for row in h2h)
    colours = list(csv.reader(io.StringIO(arena("standings", out, "-f", "Csv", "--table", "colors").out)))
    assert [row[0] for row in colours] == ["colour", "pink", "black"]
    # every game once for each colour: the wins of one are the losses of the other
    assert int(colours[1][1]) + int(colours[2][1]) + int(colours[1][2]) == 12
    assert "Results by colour (12 games)" in arena("standings", out, "--format", "PLAIN").out
    assert_one_line_error(arena("standings", out, "--table", "elo"), "unknown table 'elo'", "crosstable")


# -- files and disks ---------------------------------------------------------------


class FullDisk:
    """``arena.results.store._write`` for a disk that fills up after ``allowed``
    writes: the next write is cut short, as a real one is, and the one after fails."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.cut = False

    def __call__(self, fd: int, data: memoryview) -> int:
        if self.allowed > 0:
            self.allowed -= 1
            return os.write(fd, data)
        if not self.cut and len(data) > 1:
            self.cut = True
            return os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_at_start_is_one_line_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "_write", FullDisk(0))
    line = assert_one_line_error(arena("run", tournament_file(tmp_path)), "No space left on device")
    assert re.fullmatch(r"error: cannot write \S+/out/tournament.json: No space left on device", line), line
    no_temporary_files(tmp_path)
    assert not (tmp_path / "out" / "tournament.json").exists()


def test_a_full_disk_during_a_run_keeps_every_game_written(tmp_path, monkeypatch):
    path = tournament_file(tmp_path)
    monkeypatch.setattr(store_module, "_write", FullDisk(1 + 3))  # tournament.json, then 3 records
    result = arena("run", path)
    assert result.exit_code == 2 and result.out == ""
    line = result.err.splitlines()[-1]  # after the progress bar's last state
    assert re.fullmatch(r"error: cannot write \S+/out/games.jsonl: No space left on device; "
                        r"3 finished games are kept in \S+/out", line), line
    assert len(records(tmp_path / "out")) == 3  # whole lines only: the one cut short is gone
    no_temporary_files(tmp_path)
    monkeypatch.undo()
    resumed = arena("run", path)
    assert resumed.exit_code == 0 and "9 games played, 3 resumed" in resumed.err


def test_a_read_only_output_directory_is_one_line(tmp_path, monkeypatch):
    path = tournament_file(tmp_path)
    out = tmp_path / "out"
    real_mkdir = pathlib.Path.mkdir

    def read_only(self, *args, **kwargs):  # as a read-only mount answers, even to root
        if str(self).startswith(str(out)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", read_only)
    assert_one_line_error(arena("run", path), f"cannot create {out}: Read-only file system")
    assert not out.exists()


def test_an_output_that_is_a_file_or_a_name_too_long_is_one_line(tmp_path):
    path = tournament_file(tmp_path)
    (tmp_path / "out").write_text("not a directory\n")
    assert_one_line_error(arena("run", path), f"cannot use {tmp_path / 'out'} as the results directory",
                          "a file of that name is in the way")
    assert (tmp_path / "out").read_text() == "not a directory\n"
    long = path.read_text().replace("output: out\n", "").replace("name: tiny", "name: " + "x" * 300)
    path.write_text(long)
    assert_one_line_error(arena("run", path), "cannot create", "x" * 300, "File name too long")
    no_temporary_files(tmp_path)


BOTS_YAML = "name: t\ngame: oxono\ntime_control: 5+0.1\nbots:\n  - {name: b, cmd: python -m bots.random_bot}\n  - name: a\n"


def test_yaml_alias_bomb_is_refused():
    levels = ['      l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"      l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 8)]
    text = BOTS_YAML + "    cmd: python -m bots.random_bot\n    options:\n" + "\n".join(levels) + "\n"
    assert len(text) < 1000
    error = finishes_within(30, parse_config, text)
    assert isinstance(error, ConfigError)
    assert "the options expand to more than 100000 values" in str(error)


def test_yaml_merge_key_bomb_is_read_once_per_mapping():
    levels = ["      x0: &x0 {k0: 1}"]
    levels += [f"      x{i}: &x{i} {{<<: [*x{i - 1}, *x{i - 1}, *x{i - 1}], k{i}: 1}}" for i in range(1, 25)]
    text = BOTS_YAML + "    cmd: python -m bots.random_bot\n    options:\n" + "\n".join(levels) + "\n"
    config = finishes_within(30, parse_config, text)
    assert not isinstance(config, Exception), config
    assert sorted(config.bot("a").options["x24"]) == sorted(f"k{i}" for i in range(25))


def test_huge_inputs_are_refused_before_they_are_read(tmp_path):
    error = finishes_within(30, parse_config, BOTS_YAML + f'    cmd: "python {"x" * 200_000}"\n')
    assert isinstance(error, ConfigError) and "the command is longer than 65536 characters" in str(error)
    huge = tmp_path / "huge.yaml"
    huge.write_text(BOTS_YAML + f'    cmd: "python {"x" * 2_000_000}"\n')
    assert_one_line_error(arena("run", huge), "huge.yaml", "the file is 2.0 MB; a tournament file may hold at most 1 MB")
    assert_one_line_error(arena("check", "python " + "x" * 70_000), "longer than 65536 characters")


# -- signals --------------------------------------------------------------------------


def signal_when(command: list[str], ready, signum: int, delay: float = 0.0) -> tuple[subprocess.Popen, str, str]:
    """Start ``command``, wait until ``ready()`` and ``delay`` more seconds,
    send ``signum`` and collect the output: (process, stdout, stderr)."""
    # SIGINT as a terminal sends it: the default handler, whatever the test runner inherited.
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.005)
        time.sleep(delay)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process, stdout, ANSI.sub("", stderr)


def test_sighup_stops_a_run_like_sigterm(tmp_path):
    games = tmp_path / "out" / "games.jsonl"
    run, stdout, stderr = signal_when(
        [sys.executable, "-m", "arena", "run", str(slow_tournament(tmp_path))],
        lambda: games.exists() and games.read_bytes().count(b"\n") >= 1, signal.SIGHUP,
    )
    assert run.returncode == 130 and stdout == "" and "Traceback" not in stderr
    last = stderr.splitlines()[-1]
    assert re.fullmatch(r"error: interrupted; \d+ finished games are kept in .*out\. Run the same command to resume\.", last)


@pytest.mark.parametrize("delay", [0.05, 0.4])
def test_ctrl_c_during_start_up_is_the_same_one_line(tmp_path, delay):
    # The flag is written once Python runs the arena's entry point, before the
    # command line modules load: the interrupt lands in that start-up.
    flag = tmp_path / "flag"
    code = "import sys, pathlib, arena.__main__ as entry; pathlib.Path(sys.argv.pop(1)).touch(); entry.main()"
    process, stdout, stderr = signal_when([sys.executable, "-c", code, str(flag), "run", str(slow_tournament(tmp_path))],
                                          flag.exists, signal.SIGINT, delay)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    assert stderr.splitlines()[-1].startswith("error: interrupted")


# -- arena match and the command line ------------------------------------------------


def test_match_output_is_resumable_and_read_by_standings(tmp_path):
    out = tmp_path / "m"
    first = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "-n", "2", "--output", out)
    assert first.exit_code == 0, first.err
    seed = int(re.search(r"^seed (\d+) \(drawn at random; --seed \1 plays the same games again\)$", first.err, re.M)[1])
    assert len(records(out)) == 2 and json.loads((out / "tournament.json").read_text())["seed"] == seed
    more = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "-n", "4", "--output", out)
    assert more.exit_code == 0, more.err
    assert "drawn at random" not in more.err  # the directory's seed: the same games
    assert f"resuming: 2 of 4 games already in {out}" in more.err
    assert sum(map(int, re.search(r"W/D/L for greedy: (\d+)/(\d+)/(\d+)", more.out).groups())) == 4
    played = records(out)
    assert len(played) == len({r["game_id"] for r in played}) == 4
    standings = arena("standings", out)
    assert standings.exit_code == 0 and "after 4 games" in standings.out
    assert {"greedy", "random_bot"} <= set(standings.out.split())


def test_match_draws_a_seed_when_none_is_given():
    seeds = set()
    for _ in range(2):
        result = arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "-n", "1")
        assert result.exit_code == 0
        seeds.add(re.search(r"^seed (\d+) ", result.err, re.M)[1])
    assert len(seeds) == 2
    assert "drawn at random" not in arena("match", "python -m bots.random_bot", "python -m bots.random_bot",
                                          "-n", "1", "--seed", "7").err


@pytest.mark.parametrize("command, page", [
    ([], "tournaments.md"), (["run"], "tournaments.md"), (["standings"], "tournaments.md"),
    (["match"], "tournaments.md"), (["check"], "tournaments.md"), (["play"], "bots.md"),
])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_ends_with_an_example_and_the_docs_page(command, page, flag):
    result = arena(*command, flag)
    assert result.exit_code == 0
    lines = result.out.rstrip().splitlines()
    assert lines[-3] == "  Example:" and lines[-2].startswith("    arena ")
    assert lines[-1] == f"  Docs: docs/{page} (and README.md)" and (ROOT / "docs" / page).is_file()
    assert "<bool>" not in result.out
    assert re.search(r"^  -h, --help +Show this message and exit\.$", result.out, re.M)


def test_version():
    from arena import __version__

    result = arena("--version")
    assert result.exit_code == 0 and result.out == f"arena (Totem Arena) {__version__}\n"


def test_a_timeout_says_how_long_against_which_budget():
    result = arena("match", "python -m bots.random_bot", f"python {BOTS / 'slow.py'} 1", "-n", "1",
                   "--tc", "move 0.1", "--seed", "1")
    assert result.exit_code == 0, result.err
    assert re.search(r"^    r1-random_bot~slow-g1: slow timeout on its 1st move \(ply 2\): no move after 1\d\d(\.\d+)? ms, over its budget "
                     r"of 150 ms \(100 ms per move \+ 50 ms margin\)$", result.out, re.M), result.out
