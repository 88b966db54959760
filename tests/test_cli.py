"""The ``arena`` command end to end: run, standings, match, check.

Most tests call the Typer app in-process with ``CliRunner``; Ctrl-C needs a
real ``python -m arena.cli`` subprocess.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.cli as cli
from arena.base.processes import children
from arena.results.sprt import SprtConfig
import needs
from arena.check import check_bot
from arena.run.tournament import run_tournament
from builders import (ANSI, BOTS, ROOT, InstantExecutor, arena, assert_one_line_error, records, result, slow_tournament,
                      tournament_file)
from conftest import running_with
from arena.cli import app
from played_games import played_games

pytestmark = pytest.mark.usefixtures("no_leaked_processes", "in_repo_root")


# -- arena run -----------------------------------------------------------------


def test_run_plays_prints_standings_and_resumes(tmp_path):
    path = tournament_file(tmp_path)
    first = arena("run", path)
    assert first.exit_code == 0, first.err
    for name in ("alpha", "beta", "gamma"):
        assert re.search(rf"^\s*\d+\s+{name}\s", first.out, re.M), first.out
    assert "OXONO standings after 12 games" in first.out
    assert "12 games played, 0 resumed" in first.err
    games = tmp_path / "out" / "games.jsonl"
    played = records(tmp_path / "out")
    # 3 bots: 3 pairs x 2 start positions x 2 colours
    assert len(played) == 12 == len({r["game_id"] for r in played})
    before = games.read_bytes()

    again = arena("run", path)
    assert again.exit_code == 0, again.err
    assert "resuming: 12 of 12 games already in" in again.err
    assert "0 games played, 12 resumed" in again.err
    assert games.read_bytes() == before
    assert again.out == first.out  # the same games give the same standings


def test_run_without_a_terminal_reports_progress_as_lines(tmp_path):
    result = arena("run", tournament_file(tmp_path, bots=("alpha", "beta", "gamma", "delta")), "-f", "json")
    assert result.exit_code == 0, result.err
    json.loads(result.stdout)  # the lines are on stderr: the standings stay a document
    progress = [line for line in result.err.splitlines() if line.startswith("[")]
    # (no leader yet while the first game of the schedule is still being played)
    found = [re.fullmatch(r"\[0:00:\d\d\] tiny: (\d+) of 24 games(, leader \S+ \(-?\d+\.\d\))?", line) for line in progress]
    assert all(found), progress
    done = [int(match[1]) for match in found]
    assert [d * 10 // 24 for d in done] == list(range(1, 11))  # one at each tenth


def test_run_format_json(tmp_path):
    result = arena("run", tournament_file(tmp_path, bots=("alpha", "beta")), "--format", "json")
    assert result.exit_code == 0, result.err
    data = json.loads(result.stdout)
    assert data["game"] == "oxono" and data["total_games"] == 4
    assert sorted(bot["name"] for bot in data["bots"]) == ["alpha", "beta"]
    assert sum(bot["games"] for bot in data["bots"]) == 8


def test_run_missing_file(tmp_path):
    assert_one_line_error(arena("run", tmp_path / "nope.yaml"), "nope.yaml", "no such file")


def test_run_broken_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: t\ngame: oxono\ntime_control: 5+0.1\nrounds: 1: 2\nbots: []\n")
    assert_one_line_error(arena("run", path), "broken.yaml:4:", "bad YAML")


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        ("rounds: 1", "round: 1", ("tiny.yaml:4:", "unknown key 'round'", "rounds")),
        ("game: oxono", "game: chess", ("tiny.yaml:2:", "unknown game 'chess'")),
        ("time_control: 10+0.1", "time_control: 5-1", ("tiny.yaml:3:", "time_control", "bad time control '5-1'")),
        ("name: beta,", "name: alpha,", ("tiny.yaml:10:", "duplicate bot name 'alpha'")),
    ],
    ids=["unknown-key", "unknown-game", "bad-time-control", "duplicate-bot"],
)
def test_run_refuses_a_bad_file(tmp_path, old, new, needles):
    path = tournament_file(tmp_path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    assert_one_line_error(arena("run", path), *needles)
    assert not (tmp_path / "out").exists()


def test_run_unknown_format_plays_nothing(tmp_path):
    assert_one_line_error(arena("run", tournament_file(tmp_path), "--format", "xml"), "unknown format 'xml'", "json")
    assert not (tmp_path / "out").exists()


def test_run_conflicting_rerun_is_refused_and_keeps_the_results(tmp_path):
    path = tournament_file(tmp_path, bots=("alpha", "beta"), seed=3)
    assert arena("run", path).exit_code == 0
    out = tmp_path / "out"
    games, meta = (out / "games.jsonl").read_bytes(), (out / "tournament.json").read_bytes()
    path.write_text(path.read_text().replace("seed: 3", "seed: 4"))
    assert_one_line_error(arena("run", path), "seed 3", "4", str(out))
    assert (out / "games.jsonl").read_bytes() == games
    assert (out / "tournament.json").read_bytes() == meta


def test_run_with_a_missing_program_is_refused_before_any_game(tmp_path):
    # The programs are looked up before the first game (docs/tournaments.md): a typo is one line.
    path = tournament_file(tmp_path, cmds={"gamma": "no-such-program-xyz"})
    assert_one_line_error(arena("run", path), "tiny.yaml", "bots[2].cmd", "'gamma'", "no such program 'no-such-program-xyz'")
    assert not (tmp_path / "out" / "games.jsonl").exists()


#: A program that exists (python) but cannot start the bot.
BROKEN_START = "python no_such_script_xyz.py"


def test_run_with_a_bot_that_cannot_start_stops_before_any_game(tmp_path):
    path = tournament_file(tmp_path, cmds={"gamma": BROKEN_START})
    assert_one_line_error(
        arena("run", path), "bot 'gamma' did not start, so no game was played: bad answer to 'hello': the bot exited with code 2",
        "stderr ends with:", "no_such_script_xyz.py", "No such file or directory",
    )
    assert (tmp_path / "out" / "games.jsonl").read_bytes() == b""


def test_run_with_a_bot_that_cannot_start_forfeits_its_games_when_the_file_says_so(tmp_path):
    path = tournament_file(tmp_path, cmds={"gamma": BROKEN_START}, extra="startup_failures: forfeit\n")
    result = arena("run", path)
    assert result.exit_code == 0, result.err
    assert re.search(r"^warning: bot 'gamma' did not start: .*no_such_script_xyz\.py.*; its games are forfeited "
                     r"\(startup_failures: forfeit\)$", result.err, re.M), result.err
    played = records(tmp_path / "out")
    assert len(played) == 12
    ghost = [r for r in played if "gamma" in r["players"].values()]
    assert len(ghost) == 8
    for record in ghost:
        assert record["reason"] == "startup_failure"
        assert record["players"][record["forfeit_by"]] == "gamma"
        assert record["winner"] is not None and record["winner"] != record["forfeit_by"]
        assert "no_such_script_xyz.py" in record["detail"] and "exited with code 2" in record["detail"]
    assert all(r["forfeit_by"] is None for r in played if r not in ghost)
    row = next(line for line in result.out.splitlines() if re.match(r"\s*\d+\s+gamma\s", line))
    assert "startup_failure 8" in row


# -- arena standings -----------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A finished tournament (its file; results in ``out`` beside it)."""
    directory = tmp_path_factory.mktemp("played")
    path = tournament_file(directory, cmds={"gamma": BROKEN_START}, extra="startup_failures: forfeit\n")
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 0, result.output
    return path


def expected_standings(path: Path, fmt: str) -> str:
    from arena.results.standings import compute_standings
    from arena.results.store import ResultsStore
    from arena.results.tables import render_standings
    from arena.run.config import load_config

    config = load_config(path)
    loaded = ResultsStore(config.output).load()
    return render_standings(compute_standings(loaded.records, [b.name for b in config.bots]), fmt)


@pytest.mark.parametrize("target", ["directory", "file"])
@pytest.mark.parametrize("fmt", ["plain", "github", "html", "csv", "json"])
def test_standings_every_format(played, fmt, target):
    where = played.parent / "out" if target == "directory" else played
    result = arena("standings", where, "--format", fmt)
    assert result.exit_code == 0, result.err
    assert result.err == ""
    # printed exactly as rendered: no markup, emoji or wrapping applied by the console
    forfeits = "\n\n" + forfeits_block(played, where, fmt)
    assert result.stdout == expected_standings(played, fmt) + (forfeits if fmt in ("plain", "github") else "") + "\n"
    text = result.stdout
    if fmt == "json":
        data = json.loads(text)
        assert [b["name"] for b in data["bots"]][-1] == "gamma"
        assert data["bots"][-1]["forfeits"] == {"startup_failure": 8}
        assert data["total_games"] == 12
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))  # one table: the ranking
        assert len(rows) == 4 and {len(row) for row in rows} == {len(rows[0])}
        assert {row[1] for row in rows[1:]} == {"alpha", "beta", "gamma"}
        gamma = next(row for row in rows[1:] if row[1] == "gamma")
        assert gamma[rows[0].index("forfeits")] == "startup_failure 8"
    else:
        for name in ("alpha", "beta", "gamma"):
            assert name in text
        assert "startup_failure 8" in text
        if fmt == "html":
            assert text.startswith("<!DOCTYPE html>") and "</html>" in text
        if fmt == "github":
            assert text.startswith("# OXONO standings after 12 games") and "| gamma" in text


def forfeits_block(played: Path, where: Path, fmt: str = "plain") -> str:
    lines = [
        f"Forfeits (the first of each bot; all of them: arena standings {where} --forfeits)",
        "  gamma  r1-alpha~gamma-g1  startup_failure at start-up: bad answer to 'hello': the bot exited with code 2; "
        f"stderr ends with: {sys.executable}: can't open file '{ROOT / 'no_such_script_xyz.py'}': "
        "[Errno 2] No such file or directory  (+7 more)",
    ]
    if fmt == "github":  # Markdown: its ~ and [ escaped (test_text checks the escaping itself)
        lines = [line.replace("~", "\\~").replace("[", "\\[") for line in lines]
    return "\n".join(lines)


def test_standings_default_format_is_plain(played):
    result = arena("standings", played.parent / "out")
    assert result.exit_code == 0
    assert result.stdout == expected_standings(played, "plain") + "\n\n" + forfeits_block(played, played.parent / "out") + "\n"


def test_standings_errors(tmp_path, played):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(arena("standings", empty), "no results in", "empty", "expected a results directory holding games.jsonl")
    assert_one_line_error(arena("standings", tmp_path / "missing"), "no such file or directory", "missing",
                          "expected a results directory holding games.jsonl, that file, or a tournament file")
    assert_one_line_error(arena("standings", played.parent / "out", "-f", "xml"), "unknown format 'xml'")
    broken = tmp_path / "broken.yaml"
    broken.write_text("game: oxono\nbots: [\n")
    assert_one_line_error(arena("standings", broken), "broken.yaml:", "bad YAML")



def test_match_refuses_a_seed_tournament_json_cannot_hold(tmp_path):
    out = tmp_path / "m"
    ran = arena("match", "python -m bots.random", "python -m bots.random", "-n", "2", "-o", out, "--seed", str(1 << 63))
    assert ran.exit_code == 2 and "--seed" in ran.err and not out.exists()


def test_a_command_answered_from_the_index_imports_neither_pydantic_nor_jinja2(played):
    # Most of such a command is its start.  typer from 0.29 imports pydantic and builds an adapter for every
    # option (a sixth of a second of CPU); Jinja2 is for the HTML pages alone (a twentieth).
    shown = ("import atexit, sys; atexit.register(lambda: print(sorted({'pydantic', 'jinja2'} & set(sys.modules)), "
             f"file=sys.stderr)); sys.argv = ['arena', 'standings', {str(played.parent / 'out')!r}]; "
             "from arena.__main__ import main; main()")
    ran = subprocess.run([sys.executable, "-c", shown], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(expected_standings(played, "plain")), ran.stdout
    assert ran.stderr.splitlines()[-1] == "[]"

# -- arena match ---------------------------------------------------------------


def match_summary(text: str) -> tuple[int, int, int]:
    found = re.search(r"W/D/L for \S+: (\d+)/(\d+)/(\d+)", text)
    assert found, text
    return tuple(int(n) for n in found.groups())


def test_match_greedy_against_random():
    result = arena("match", "python -m bots.greedy", "python -m bots.random_bot",
                   "--game", "oxono", "--games", "4", "--tc", "5+0.1")
    assert result.exit_code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "greedy vs random_bot: playing 4 games of oxono at 5+0.1"
    assert sum(match_summary(result.out)) == 4
    elo = r"[+-](\d+|inf)( ± \d+| \[[+-](\d+|inf), [+-](\d+|inf)\])?"
    nelo = r"[+-](\d+|inf) ± (\d+|inf)"
    assert re.search(rf"^  Elo difference: {elo}, normalized {nelo} \(95%, from 2 game pairs\)  LOS \d+\.\d%$",
                     result.out, re.M), result.out
    assert re.search(r"^  game pairs LL/LD/WL\+DD/WD/WW: \d+/\d+/\d+/\d+/\d+$", result.out, re.M), result.out
    assert "  forfeits: none" in lines


def test_match_under_sprt_stops_once_decided():
    result = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--sprt", "elo0=0,elo1=200",
                   "--games", "200", "-j", "2", "--tc", "10+0.1")
    assert result.exit_code == 0, result.err
    played = sum(match_summary(result.out))
    found = re.search(r"^  SPRT \[0, 200\] normalized LLR (-?\d+\.\d\d) \(-2\.94, 2\.94\): H1 accepted after (\d+) pairs",
                      result.out, re.M)
    assert found, result.out
    assert float(found[1]) >= 2.94
    # Stopped soon after the bound: the games in flight finish, and while the last game of the deciding pair
    # is played the other worker may have played a pair or two after it (CI saw 18 games after 7 pairs).
    assert 2 * int(found[2]) <= played <= 2 * (int(found[2]) + 2 * 2) < 40


@pytest.mark.parametrize(("args", "needles"), [
    (("--sprt", "elo0=5,elo1=0"), ["elo0 must be below elo1"]),
    (("--sprt", "elo1=5"), ["needs elo0"]),
    (("--openings", "plies=x"), ["--openings plies=x", "bad setting"]),
    (("--openings", "no-such-suite.txt"), ["--openings no-such-suite.txt", "cannot read"]),
])
def test_match_bad_sprt_or_openings(args, needles):
    assert_one_line_error(arena("match", "python -m bots.greedy", "python -m bots.random_bot", *args), *needles)


def test_match_plays_an_opening_suite_in_pairs():
    result = arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "--openings",
                   "plies=6,count=2", "--games", "4")
    assert result.exit_code == 0, result.err
    assert "(95%, from 2 game pairs)" in result.out


def test_match_reports_forfeits_by_reason(tmp_path):
    result = arena("match", "python -m bots.random_bot", f"python {BOTS / 'illegal_move.py'}",
                   "--games", "2", "--logs", tmp_path / "logs")
    assert result.exit_code == 0, result.err
    assert match_summary(result.out) == (2, 0, 0)
    assert "  forfeits by illegal_move: illegal_move 2" in result.out.splitlines()
    details = [line for line in result.out.splitlines() if line.startswith("    r1-")]
    assert len(details) == 2
    for line in details:
        # one line per forfeit, however long, quoting the offending move
        assert re.fullmatch(r"    r1-illegal_move~random_bot-g\d: illegal_move illegal_move on its 1st move \(ply \d\): played 'Zz9 z9', "
                                r"not a legal move: malformed move 'Zz9 z9': .+", line)
    assert any((tmp_path / "logs").iterdir())


def test_match_default_names_ignore_trailing_arguments():
    slow = f"python {BOTS / 'slow.py'}"
    result = arena("match", f"{slow} 0.001", f"{slow} 0.002", "--games", "1")
    assert result.exit_code == 0, result.err
    assert result.out.startswith("slow-1 vs slow-2: playing 1 game of oxono")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--game", "chess"], ("unknown game 'chess'",)),
        (["--tc", "5-1"], ("bad time control '5-1'",)),
    ],
)
def test_match_bad_options(args, needles):
    assert_one_line_error(arena("match", "python -m bots.greedy", "python -m bots.random_bot", *args), *needles)


def test_match_empty_command():
    assert_one_line_error(arena("match", "", "python -m bots.random_bot"), "empty command")


def test_match_sprt_without_games_runs_until_decided_with_the_cap_in_the_first_line_and_lines_for_a_log():
    result = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--sprt", "elo0=0,elo1=150",
                   "--openings", "plies=4,count=50", "--seed", "3", "--tc", "10+0.1")
    assert result.exit_code == 0, result.err
    lines = result.out.splitlines()
    cap = SprtConfig(0, 150).game_cap()
    assert lines[0] == (f"greedy vs random_bot: SPRT [0, 150] normalized (alpha 0.05, beta 0.05) on oxono at 10+0.1; "
                        f"until decided, at most {cap} games (3 × the 14 pairs expected under H0)")
    # stdout is not a terminal: the progress as lines, one at each tenth of the cap (and one at the end)
    progress = [line for line in lines if line.startswith("[")]
    line = (r"\[0:\d\d:\d\d\] (\d+) of \d+ games, \d+ pairs?: W/D/L \d+/\d+/\d+, LL/LD/WL\+DD/WD/WW \d+/\d+/\d+/\d+/\d+, "
            r"Elo \S+( ± \d+| \[\S+, \S+\])?, nElo \S+ ± \S+, LLR -?\d+\.\d\d \(-2\.94, 2\.94\) (undecided|H1 accepted)")
    done = [int(re.fullmatch(line, text)[1]) for text in progress]
    assert [d * 10 // cap for d in done[:-1]] == list(range(1, len(done)))
    played = sum(match_summary(result.out))
    assert done[-1] == played < cap
    found = re.search(r"^  SPRT \[0, 150\] normalized LLR (\d+\.\d\d) \(-2\.94, 2\.94\): H1 accepted after (\d+) pairs "
                      r"at normalized Elo \+(\d+|inf) ± (\d+|inf)", result.out, re.M)
    assert found and float(found[1]) >= 2.94, result.out


def test_match_bots_with_names_options_and_their_own_clocks(tmp_path):
    out = tmp_path / "odds"
    result = arena("match", "--bot", "name=deep,cmd=python -m bots.alphabeta,option.depth=2,tc=move 0.5",
                   "--bot", "name=shallow,cmd='python -m bots.alphabeta',option.depth=1", "-n", "2", "-o", out, "--seed", "1")
    assert result.exit_code == 0, result.err
    assert result.out.splitlines()[0] == "deep vs shallow: playing 2 games of oxono with deep at move 0.5 and shallow at 5+0.1"
    meta = json.loads((out / "tournament.json").read_text())
    assert [(b["name"], b["options"], b.get("time_control")) for b in meta["bots"]] == [
        ("deep", {"depth": 2}, {"per_move_ms": 500}), ("shallow", {"depth": 1}, None)]
    for game in records(out):
        deep = next(color for color, name in game["players"].items() if name == "deep")
        assert game["time_controls"][deep] == {"per_move_ms": 500}
        assert all(move.get("info", {}).get("depth", 0) <= 2 for move in game["moves"])
    table = arena("standings", out).out
    assert re.search(r"^\s+#\s+bot\s+clock\s+rating", table, re.M), table
    assert re.search(r"^\s+\d\s+deep\s+move 0\.5\s", table, re.M) and re.search(r"^\s+\d\s+shallow\s+5\+0\.1\s", table, re.M)
    again = arena("match", "--bot", "name=deep,cmd=python -m bots.alphabeta,option.depth=2,tc=move 1",
                  "--bot", "name=shallow,cmd='python -m bots.alphabeta',option.depth=1", "-n", "2", "-o", out)
    assert_one_line_error(again, "were played with bot 'deep' on the clock move 0.5, this command now says move 1")


def test_a_match_needs_two_bots():
    assert_one_line_error(arena("match", "python -m bots.greedy"), "a match is between two bots", "(got 1)")
    assert_one_line_error(arena("match", "python -m bots.greedy", "--bot", "cmd=x", "--bot", "cmd=y"), "(got 3)")
    assert_one_line_error(arena("match", "python -m bots.greedy", "--bot", "name=x"), "--bot name=x: needs cmd")


def test_a_match_rerun_as_another_test_is_refused_and_new_starts_it_beside(tmp_path):
    out = tmp_path / "test"
    base = ["match", "python -m bots.greedy", "python -m bots.random_bot", "-n", "2", "-o", out]
    assert arena(*base, "--sprt", "elo0=0,elo1=100").exit_code == 0
    refused = arena(*base, "--sprt", "elo0=0,elo1=100,model=logistic")
    assert_one_line_error(refused, "were played as the SPRT elo0=0,elo1=100,alpha=0.05,beta=0.05,model=normalized, "
                                   "this command now says elo0=0,elo1=100,alpha=0.05,beta=0.05,model=logistic")
    other = arena(*base, "--sprt", "elo0=0,elo1=100,model=logistic", "--new")
    assert other.exit_code == 0, other.err
    assert f"{out} holds another test; this one is in {out}-2" in other.err
    assert json.loads((tmp_path / "test-2" / "tournament.json").read_text())["sprt"]["model"] == "logistic"
    resumed = arena(*base, "--sprt", "elo0=0,elo1=100,model=logistic", "--new")  # the same command: the same test
    assert resumed.exit_code == 0 and f"resuming: 2 of 2 games already in {out}-2" in resumed.err, resumed.err
    assert not (tmp_path / "test-3").exists()
    assert json.loads((out / "tournament.json").read_text())["sprt"]["model"] == "normalized"  # untouched


# -- arena check ---------------------------------------------------------------

CHECK_STEPS = 5


def check_lines(result) -> list[str]:
    return result.out.splitlines()


def test_check_random_bot_passes():
    result = arena("check", "python -m bots.random_bot", "--game", "oxono")
    assert result.exit_code == 0, result.out
    lines = check_lines(result)
    assert len(lines) == CHECK_STEPS + 1
    assert all(line.startswith("ok ") for line in lines[:-1])
    assert lines[0] == "ok   starts and answers 'hello' with 'ready': name RandomBot, version 1.0, author Totem Arena"
    assert lines[-2] == "ok   exits on 'quit': exit code 0"
    assert lines[-1] == "all checks passed"


@pytest.fixture
def quick_check(monkeypatch):
    """A shorter quit grace for the bot that would use it up."""
    monkeypatch.setattr(cli, "check_bot", functools.partial(check_bot, quit_grace_s=0.5))


@pytest.mark.parametrize(
    ("bot", "failing", "needles"),
    [
        ("illegal_move", "plays a whole game as pink against a random bot",
         ("illegal_move on its 1st move (ply 1): played 'Zz9 z9'",)),
        ("no_hello", "starts and answers 'hello' with 'ready'", ("no answer to 'hello' within 1 s (startup_timeout, --startup-timeout) — does the bot flush its output after each line?",)),
        ("non_json", "plays a whole game as pink against a random bot",
         ("protocol_error on its 1st move (ply 1): not JSON: 'hello world'",)),
        ("exit_at_start", "starts and answers 'hello' with 'ready'",
         ("exited with code 1", "exit_at_start: missing configuration, giving up")),
    ],
)
def test_check_names_the_problem(quick_check, bot, failing, needles):
    result = arena("check", f"python {BOTS / bot}.py", "--game", "oxono", "--startup-timeout", "1")
    assert result.exit_code == 1
    lines = check_lines(result)
    assert "all checks passed" not in result.out
    # the checklist stops at the failed step, which is the last line
    assert all(line.startswith("ok ") for line in lines[:-1])
    assert lines[-1].startswith(f"FAIL {failing}: ")
    for needle in needles:
        assert needle in lines[-1]


NO_QUIT_BOT = """\
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": message["legal_moves"][0]}), flush=True)
while True:  # 'quit' and the end of input are both ignored
    time.sleep(3600)
"""


def test_check_a_bot_that_ignores_quit(tmp_path, quick_check):
    bot = tmp_path / "no_quit.py"
    bot.write_text(NO_QUIT_BOT)
    result = arena("check", f"python {bot}")
    assert result.exit_code == 1
    lines = check_lines(result)
    assert len(lines) == CHECK_STEPS
    assert all(line.startswith("ok ") for line in lines[:-1])
    assert lines[-1] == "FAIL exits on 'quit': still running 0.5 s after 'quit': killed"


def test_check_quotes_bot_output_literally(tmp_path):
    # rich markup in a bot's output must be shown as it is, not interpreted (nor crash)
    bot = tmp_path / "markup.py"
    bot.write_text(f"import sys\nsys.path.insert(0, {str(BOTS)!r})\nfrom _botlib import play\n"
                   "play(lambda turn, count: '[/] [bold]oops[/bold]')\n")
    result = arena("check", f"python {bot}")
    assert result.exit_code == 1
    assert check_lines(result)[-1].endswith("protocol_error on its 1st move (ply 1): not JSON: '[/] [bold]oops[/bold]'")


def test_check_bad_options():
    assert_one_line_error(arena("check", "python -m bots.random_bot", "--game", "chess"), "unknown game 'chess'")
    assert_one_line_error(arena("check", "python -m bots.random_bot", "--tc", "fast"), "bad time control 'fast'")
    assert_one_line_error(arena("check", ""), "empty command")


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory) -> Path:
    needs.program("gcc", "apt-get install gcc")
    binary = tmp_path_factory.mktemp("cbot") / "random_bot"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "bots" / "c" / "random_bot.c")], check=True)
    return binary


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_check_c_bot(c_bot, game):
    result = arena("check", str(c_bot), "--game", game)
    assert result.exit_code == 0, result.out
    assert check_lines(result)[0].endswith("name RandomBot-C, version 1.0, author Totem Arena")
    assert check_lines(result)[-1] == "all checks passed"


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_check_js_bot(game):
    needs.program("node", "apt-get install nodejs")
    result = arena("check", "node bots/js/random_bot.js", "--game", game)
    assert result.exit_code == 0, result.out
    assert check_lines(result)[0].endswith("name RandomBot-JS, version 1.0, author Totem Arena")
    assert check_lines(result)[-1] == "all checks passed"


# -- Ctrl-C --------------------------------------------------------------------


def interrupt_when(command, ready, what, env=None):
    """Start ``command``, wait until ``ready()``, send Ctrl-C (SIGINT) and
    collect the output: (process, stdout, stderr)."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not ready():
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, what
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process, stdout, stderr


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path):
    path = slow_tournament(tmp_path)
    games = tmp_path / "out" / "games.jsonl"
    command = [sys.executable, "-m", "arena.cli", "run", str(path)]
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    arena_run, stdout, stderr = interrupt_when(
        command, lambda: games.exists() and games.read_bytes().count(b"\n") >= 1, "no game finished in time", env=env
    )
    assert arena_run.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stdout == ""  # no standings for an interrupted run
    message = ANSI.sub("", stderr).splitlines()[-1]
    assert re.fullmatch(r"error: interrupted; \d+ finished games are kept in .*out\. Run the same command to resume\.", message)
    kept = int(re.search(r"(\d+) finished games", message).group(1))
    lines = games.read_text().splitlines()
    assert len(lines) == kept >= 1
    stored = [json.loads(line) for line in lines]  # every line parses
    assert kept < 40, "the interrupt came too late to test anything"

    resumed = arena("run", path)  # the stop was the process's; the resume is the same command in this one
    assert resumed.exit_code == 0, resumed.err
    assert f"resuming: {kept} of 40 games already in" in resumed.err
    final = records(tmp_path / "out")
    ids = [r["game_id"] for r in final]
    assert len(ids) == len(set(ids)) == 40
    assert final[:kept] == stored  # the games kept are kept as they were


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_a_match(tmp_path):
    marker = f"marker-{tmp_path.name}"
    bot = f"python {BOTS / 'slow.py'} 0.05 {marker}"
    match, stdout, stderr = interrupt_when(
        [sys.executable, "-m", "arena.cli", "match", bot, bot, "--games", "20"],
        # The arena and its worker carry the marker in their command line too:
        # four processes means both bots started, the match is under way.
        lambda: len(running_with(marker)) >= 4,
        "the bots did not start",
    )
    assert match.returncode == 130, stderr
    # stdout, a pipe: what the match plays (once the bots started), then its progress as lines; no summary
    assert "Traceback" not in stderr and stdout.splitlines()[:1] in ([], ["slow-1 vs slow-2: playing 20 games of oxono at 5+0.1"])
    assert all(re.match(r"\[\d:\d\d:\d\d\] \d+ of 20 games", line) for line in stdout.splitlines()[1:]), stdout
    # the score so far: nothing is lost silently
    last = ANSI.sub("", stderr).splitlines()[-1]
    found = re.fullmatch(r"error: interrupted after (\d+) of 20 games; W/D/L for slow-1: (\d+)/(\d+)/(\d+)", last)
    assert found, last
    assert int(found[1]) == sum(map(int, found.groups()[1:]))


def test_run_refuses_a_directory_in_use(tmp_path):
    from arena.results.store import ResultsStore
    from arena.run.config import load_config
    from arena.run.results_dir import RunPlan, open_results

    path = tournament_file(tmp_path, bots=("alpha", "beta"))
    config = load_config(path)
    with ResultsStore(config.output) as store:
        open_results(store, RunPlan(config, store.directory))
        assert_one_line_error(arena("run", path), "another 'arena run' is writing to", str(config.output))
    assert (config.output / "games.jsonl").read_bytes() == b""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_killed_from_outside_ends_the_run_with_one_line(tmp_path):
    path = slow_tournament(tmp_path)
    games = tmp_path / "out" / "games.jsonl"
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (games.exists() and games.read_bytes().count(b"\n") >= 1):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        worker = next(pid for pid in children(run.pid) if b"arena.cli" in Path(f"/proc/{pid}/cmdline").read_bytes())
        os.kill(worker, signal.SIGKILL)
        stdout, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 1 and stdout == ""
    message = ANSI.sub("", stderr).splitlines()[-1]
    assert re.fullmatch(r"error: arena-worker-\d died \(exit code -9\) in the middle of a game; that game is lost, "
                        r"every finished game is kept\. Run the same command to resume\.", message)
    assert all(json.loads(line) for line in games.read_text().splitlines())


def test_run_under_sprt_shows_the_test_and_standings_keep_it(tmp_path):
    path = tournament_file(tmp_path, bots=("greedy", "random"), extra="sprt: {elo0: 0, elo1: 200}\n",
                           cmds={"greedy": "python -m bots.greedy"}, rounds=50)
    result = arena("run", path)
    assert result.exit_code == 0, result.err
    assert re.search(r"^SPRT \(normalized Elo, game pairs\)$", result.out, re.M), result.out
    assert re.search(r"^\s+0\s+200\s+0\.05\s+0\.05\s+\d+\.\d\d\s+-2\.94\s+2\.94\s+\d+\s+H1 accepted$", result.out, re.M)
    assert "the SPRT is decided" in result.err
    assert "LLR" in result.err  # the progress line shows it live
    shown = json.loads(arena("standings", tmp_path / "out", "--format", "json").out)
    sprt = shown["sprt"]
    assert set(sprt) >= {"llr", "lower", "upper", "elo0", "elo1", "alpha", "beta", "verdict", "pairs"}
    assert sprt["verdict"] == "H1" and sprt["llr"] >= sprt["upper"] and sprt["elo1"] == 200
    # The match counts every complete pair; the test, those up to its verdict (later ones were in play at it).
    assert shown["match"]["bots"] == ["greedy", "random"] and shown["match"]["pairs"] == sprt["pairs"] + sprt["later_pairs"]
    assert {"elo", "elo_margin", "los_next"} <= set(shown["bots"][0])


@pytest.mark.parametrize(("sprt", "needles"), [
    ("{elo0: 0}", ["sprt.elo1: required key missing"]),
    ("{elo0: 5, elo1: 0}", ["sprt:", "elo0 must be below elo1"]),
    ("{elo0: 0, elo1: 5, alpha: x}", ["sprt.alpha: must be a number"]),
    ("{elo0: 0, elo1: 5, gamma: 1}", ["sprt.gamma: unknown key"]),
])
def test_run_refuses_a_bad_sprt(tmp_path, sprt, needles):
    path = tournament_file(tmp_path, bots=("a", "b"), extra=f"sprt: {sprt}\n")
    assert_one_line_error(arena("run", path), *needles)


# -- arena report, arena show ------------------------------------------------------


def results_dir(directory: Path, game: str = "oxono", count: int = 6) -> tuple[Path, list]:
    records = played_games(game, ["ann", "bob"], count, seed=9, forfeit_every=3)
    out = directory / "results"
    out.mkdir()
    (out / "games.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))
    meta = {"name": "cup", "game": game, "time_control": {"initial_ms": 5000, "increment_ms": 100},
            "bots": [{"name": "ann", "options": {}}, {"name": "bob", "options": {}}]}
    (out / "tournament.json").write_text(json.dumps(meta))
    return out, records


def test_report_writes_one_page_into_the_results(tmp_path):
    out, records = results_dir(tmp_path)
    result = arena("report", out)
    assert result.exit_code == 0, result.err
    assert result.err.strip() == f"report of 6 games written to {out / 'report.html'}"
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and all(f'"id":"{r.game_id}"' in page for r in records)
    elsewhere = tmp_path / "r.html"
    assert arena("report", out, "-o", elsewhere).exit_code == 0
    assert elsewhere.read_text().count('data-table="ranking"') == 1


def test_report_of_a_tournament_file_uses_its_output(tmp_path):
    path = tournament_file(tmp_path, bots=("alpha", "beta"), extra="report: true\n")
    run = arena("run", path)
    assert run.exit_code == 0 and run.err.splitlines()[-1] == f"report: {tmp_path / 'out' / 'report.html'}"
    (tmp_path / "out" / "report.html").unlink()
    result = arena("report", path)
    assert result.exit_code == 0, result.err
    assert (tmp_path / "out" / "report.html").exists()


def test_report_errors_are_one_line(tmp_path):
    assert_one_line_error(arena("report", tmp_path), "no results in", str(tmp_path))
    out, _ = results_dir(tmp_path)
    assert_one_line_error(arena("report", out, "-o", tmp_path / "missing" / "r.html"),
                          "cannot write the report", "missing", "No such file or directory")
    with open(out / "games.jsonl", "a") as games:  # a record of another game is left out, with a warning
        games.write(json.dumps({**records(out)[0], "game_id": "odd", "game": "yoxii", "players": {"white": "a", "red": "b"},
                                "winner": None, "reason": "blocked", "forfeit_by": None, "versions": None}) + "\n")
    kept = arena("report", out)
    assert kept.exit_code == 0 and "skipped a record of another game" in kept.err
    assert '"id":"odd"' not in (out / "report.html").read_text()


def test_show_prints_every_move_or_the_final_position(tmp_path):
    out, records = results_dir(tmp_path, "yoxii")
    record = records[0]
    result = arena("show", out, record.game_id)
    assert result.exit_code == 0, result.err
    assert result.out.startswith(f"yoxii game {record.game_id}: ann (white) vs bob (red)")
    assert result.out.count("\nmove ") == len(record.moves)
    assert result.out.rstrip().endswith(f"wins by blocked (white {record.scores['white']}, red {record.scores['red']})")
    final = arena("show", out, record.game_id, "--final")
    assert final.exit_code == 0
    assert final.out.count("\nmove ") == 1 and f"move {len(record.moves)}:" in final.out
    assert_one_line_error(arena("show", out, "r9-g9"), "no game 'r9-g9'")


def test_show_steps_with_enter_on_a_terminal(tmp_path):
    import pty

    out, records = results_dir(tmp_path)
    record = records[0]
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "show", str(out), record.game_id],
                            stdin=secondary, stdout=secondary, stderr=secondary, cwd=ROOT)
    os.close(secondary)
    seen = b""

    def read_until(needle: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 30
        while needle not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            seen += os.read(primary, 4096)

    try:
        read_until(f"[1/{len(record.moves)}] Enter".encode())
        assert b"move 1:" not in seen
        os.write(primary, b"\n")
        read_until(f"[2/{len(record.moves)}] Enter".encode())
        assert b"move 1:" in seen and b"move 2:" not in seen
        os.write(primary, b"q\n")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
        os.close(primary)


def _at_once(spec):
    """A game that ends at once, won by either seat or drawn."""
    return result(spec, None if spec.index % 5 == 0 else spec.players[spec.index % 3 == 0])


def test_run_lines_name_the_leader_by_the_ranking_rule_with_round_and_sprt(tmp_path, monkeypatch):
    # The lines, not the games: they end at once.
    monkeypatch.setattr(cli, "run_tournament", functools.partial(run_tournament, executor=InstantExecutor(_at_once)))
    # A round robin ranked by points: the leader's figure is its points, and the last line's leader is the table's.
    path = tournament_file(tmp_path, bots=("alpha", "beta", "gamma"), ranking="points")
    result = arena("run", path, "-f", "json")
    assert result.exit_code == 0, result.err
    lines = [line for line in result.err.splitlines() if line.startswith("[")]
    assert all(re.fullmatch(r"\[0:00:\d\d\] tiny: \d+ of 12 games(, leader \S+ \(\d+(\.5)? points?\))?", line)
               for line in lines), lines
    first = json.loads(result.stdout)["bots"][0]
    assert lines[-1].endswith(f"12 of 12 games, leader {first['name']} ({first['score']:g} points)")
    # A Swiss: the round; two bots under an SPRT: the LLR and its bounds.
    swiss = arena("run", tournament_file(tmp_path, bots=("alpha", "beta", "gamma", "delta"), rounds=2, file="swiss.yaml",
                                         extra="format: swiss\n", output="swiss-out"))
    assert swiss.exit_code == 0, swiss.err
    assert re.search(r"tiny, round 2 of 2: 8 of 8 games, leader \S+$", swiss.err, re.M), swiss.err
    sprt = arena("run", tournament_file(tmp_path, bots=("alpha", "beta"), rounds=3, output="sprt-out", file="sprt.yaml",
                                        extra="sprt: {elo0: 0, elo1: 200}\n"))
    assert sprt.exit_code == 0, sprt.err
    assert re.search(r"tiny: \d+ of \d+ games, leader \S+ \(-?\d+\.\d\), LLR -?\d+\.\d\d \(-2\.94, 2\.94\) \w", sprt.err), sprt.err


def test_a_warning_of_the_layers_below_is_one_warning_line_of_the_command(tmp_path, monkeypatch):
    import logging

    def lost_then_none(target):
        logging.getLogger("arena.run.spec_queue").warning("a Ray actor was lost (node lost) in the middle of game g0: "
                                                          "it is played again")
        raise FileNotFoundError(f"no results in {target}")

    monkeypatch.setattr(cli, "read_standings", lost_then_none)
    said = arena("standings", tmp_path)
    assert said.exit_code == 2
    assert said.err.splitlines() == [
        "warning: a Ray actor was lost (node lost) in the middle of game g0: it is played again",
        f"error: no results in {tmp_path}"]
