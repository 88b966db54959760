"""A league disrupted as a teaching assistant's is: interrupted, edited, damaged.

Each test is one failure measured in issue 26 (or found by the model of
``tests/test_league_model.py``), driven through the ``arena`` command only,
so that it holds whatever the modules behind the command are called.  The
bots are small deterministic scripts (``tests/league_model.py``): a game
played again gives the same game, so a disruption must leave the results
as they were.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders import arena as arena_here
from league_model import (
    BOT_SOURCE, ROOT, arena_command, archived_of, canonical, format_settings, lines_of, outcomes, records_of,
    report_ranking, wait_for_session, write_bot, write_league, arena_env,
)

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

CUP_BOTS = ["ann", "bob", "cy", "dee", "eve", "fay"]
#: A Swiss of 3 rounds, then a knockout of its top 4: the cup of the issue, in miniature.
CUP = format_settings("stages", rounds=3, top=4)


# A run no signal stops is driven in this process (``arena_here``: the same command, its games played by the
# same workers and bots): a process of its own would add a second of CPU, start-up alone, to each.  A run a
# test stops, and what a process alone shows (its exit on a signal, what outlives it), stay in a process.


def ok(result) -> None:
    assert result.exit_code == 0, result.err
    assert "Traceback" not in result.err


def standings(target: Path, *args: str) -> tuple[dict, str]:
    """``arena standings TARGET -f json``, in this process (as
    :func:`verdict_in_process`): a reader starts no bot, and a process of its
    own costs more than the reading."""
    result = arena_here("standings", target, "-f", "json", *args)
    ok(result)
    return json.loads(result.out), result.err


def verdict_in_process(target: Path) -> str | None:
    """The SPRT verdict ``arena standings`` gives, from this process: a loop
    that tries game after game would pay a process start (seconds on a busy
    machine) for each."""
    result = arena_here("standings", target, "-f", "json")
    ok(result)
    return json.loads(result.out)["sprt"]["verdict"]


def played(result) -> int:
    found = re.search(r"^(\d+) games played, (\d+) resumed", result.err, re.M)
    assert found, result.err
    return int(found[1])


@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    """A finished cup of six bots (played once for the module; copy it)."""
    directory = tmp_path_factory.mktemp("cup")
    path = write_league(directory, CUP_BOTS, CUP, seed=5)
    ok(arena_here("run", path))
    return directory


def copy_of(cup: Path, tmp_path: Path) -> Path:
    shutil.copytree(cup, tmp_path / "cup")
    return tmp_path / "cup"


def last_of_the_swiss(directory: Path) -> str:
    """A bot the Swiss knocked out: the knockout is played without it."""
    data, _ = standings(directory / "out")
    return data["bots"][-1]["name"]


# ---- interrupted --replay of a staged tournament --------------------------------------


def sigterm_once(args: list[object], ready) -> subprocess.CompletedProcess:
    """Run ``arena ARGS``; SIGTERM it once ``ready()``; its exit code and output."""
    process = subprocess.Popen(arena_command(*args), cwd=ROOT, env=arena_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while process.poll() is None and not ready() and time.monotonic() < deadline:
        time.sleep(0.002)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    wait_for_session(process.pid)
    return subprocess.CompletedProcess(args, process.returncode, out, err)


@pytest.mark.parametrize("resume", ["plain run", "same --replay"])
def test_an_interrupted_replay_of_a_staged_tournament_resumes_and_keeps_its_champion(cup, tmp_path, resume):
    league = copy_of(cup, tmp_path)
    before = outcomes(league / "out")
    champion = standings(league / "out")[0]["bots"][0]["name"]
    replayed = last_of_the_swiss(league)
    (league / "SLOW").touch()  # 20 ms a move: the replay is still playing when it is stopped
    games = league / "out" / "games.jsonl"
    # Stopped once the archived records have left games.jsonl, before they are all played again.
    stopped = sigterm_once(["run", league / "league.yaml", "--replay", replayed],
                           lambda: len(lines_of(games)) < len(before))
    assert stopped.returncode == 130, stopped.stderr
    assert "Run the same command to resume" in stopped.stderr and "Traceback" not in stopped.stderr
    assert len(outcomes(league / "out")) < len(before)  # stopped in the middle of the replay
    (league / "SLOW").unlink()

    again = ["run", league / "league.yaml"] + (["--replay", replayed] if resume == "same --replay" else [])
    ok(arena_here(*again))
    data, warnings = standings(league / "league.yaml")
    assert "does not schedule" not in warnings
    assert data["bots"][0]["name"] == champion
    assert outcomes(league / "out") == before  # the same bots play the same games again


@pytest.mark.parametrize("damage", ["deleted", "unreadable"])
def test_a_lost_line_of_a_swiss_round_is_played_again(cup, tmp_path, damage):
    league = copy_of(cup, tmp_path)
    before = outcomes(league / "out")
    path = league / "out" / "games.jsonl"
    lines = lines_of(path)
    index = next(i for i, line in enumerate(lines) if json.loads(line)["round"] == 1)
    lines[index:index + 1] = [] if damage == "deleted" else [b'{"game_id": "r1-?", "winner": nul']
    path.write_bytes(b"".join(line + b"\n" for line in lines))

    resumed = arena_here("run", league / "league.yaml")
    ok(resumed)
    assert played(resumed) == 1
    assert outcomes(league / "out") == before
    assert "does not schedule" not in standings(league / "out")[1]


def test_a_lost_game_of_a_knockout_match_decided_in_its_tie_breaks_is_played_again(tmp_path):
    """Found by the model (seed 30, knockout): the first game of a match
    that went to a tie-break pair, deleted, and the run was refused."""
    path = write_league(tmp_path, ["ann", "bob", "cy", "dee"], format_settings("knockout"), seed=2)
    ok(arena_here("run", path))
    before = outcomes(tmp_path / "out")
    assert "r1-ann~dee-g3" in before  # these bots, on this seed, tie their first game pair
    games = tmp_path / "out" / "games.jsonl"
    games.write_bytes(b"".join(line + b"\n" for line in lines_of(games) if b'"r1-ann~dee-g1"' not in line))

    resumed = arena_here("run", path)
    ok(resumed)
    assert played(resumed) == 1
    assert outcomes(tmp_path / "out") == before


@pytest.mark.usefixtures("in_repo_root")  # python -m bots.random_bot
def test_a_lost_game_of_a_decided_sprt_match_is_played_again(tmp_path):
    """Found by the model (seed 2020, sprt): a line of a match whose SPRT is
    decided, deleted; the test was still decided without its game pair, so
    the same command played nothing and the match stayed a game short.
    Against the random bot (deterministic from each game's seed): greedy's
    YOXII search cost 18 of the test's 20 CPU seconds, and the bookkeeping
    is the same."""
    (tmp_path / "a.py").write_text(BOT_SOURCE.format(salt=0))
    command = ["match", f"python {tmp_path / 'a.py'}", "python -m bots.random_bot", "-g", "yoxii", "-n", "60",
               "--seed", "1", "--sprt", "elo0=-200,elo1=-100", "-o", tmp_path / "m"]
    ok(arena_here(*command))
    before = outcomes(tmp_path / "m")
    games = tmp_path / "m" / "games.jsonl"
    lines = lines_of(games)
    # A game of one of the first pairs, which the test is decided without.
    for lost in sorted(range(len(lines)), key=lambda i: json.loads(lines[i])["index"]):
        games.write_bytes(b"".join(line + b"\n" for i, line in enumerate(lines) if i != lost))
        if verdict_in_process(tmp_path / "m") in ("H0", "H1"):
            break
    else:
        pytest.fail("every game of this match is needed to decide its SPRT")

    ok(arena_here(*command))
    assert outcomes(tmp_path / "m") == before


# ---- departures -----------------------------------------------------------------------


def ranking_rows(text: str) -> list[str]:
    """The bot column of ``arena standings --table ranking``'s plain table."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---")) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.split()[1])
    return rows


def test_a_champion_taken_out_of_the_file_is_not_ranked_at_all(cup, tmp_path):
    league = copy_of(cup, tmp_path)
    champion = standings(league / "out")[0]["bots"][0]["name"]
    write_league(league, [b for b in CUP_BOTS if b != champion], CUP, seed=5)

    for target in (league / "league.yaml", league / "out"):
        if target.name == "out":
            ok(arena_here("run", league / "league.yaml"))  # the directory says so too once a run has seen it
        data, warnings = standings(target)
        assert f"left out of the ranking (kept in games.jsonl): {champion}" in warnings
        assert champion not in [bot["name"] for bot in data["bots"]]
        table = arena_here("standings", target, "--table", "ranking")
        ok(table)
        assert champion not in ranking_rows(table.out)
        ok(arena_here("report", target, "-o", tmp_path / "report.html"))
        assert champion not in report_ranking((tmp_path / "report.html").read_text())


#: ann, a bot of the model (league_model.BOT_SOURCE) that says its SALT on
#: stderr at each game (its game's log keeps it) and, as its first game
#: ends, edits its own file: SALT 0 becomes 1, a new version, mid-run.
SELF_EDITING = BOT_SOURCE.replace(
    "        rng = random.Random(f\"{{SALT}}:{{message.get('seed')}}\")\n",
    "        rng = random.Random(f\"{{SALT}}:{{message.get('seed')}}\")\n"
    "        print('salt', SALT, file=sys.stderr, flush=True)\n",
).replace(
    "    elif kind == \"quit\":\n",
    "    elif kind == 'game_over' and SALT == 0 and not globals().get('EDITED'):\n"
    "        EDITED = True\n"
    "        here = os.path.abspath(__file__)\n"
    "        text = open(here).read().replace('SALT = 0' + chr(10), 'SALT = 1' + chr(10), 1)\n"
    "        open(here + '.new', 'w').write(text)\n"
    "        os.replace(here + '.new', here)\n"
    "    elif kind == \"quit\":\n",
)


#: ann as :data:`SELF_EDITING`, whose process then exits (as a crash between
#: games would): its next game in that worker starts the edited files.
SELF_EDITING_THEN_EXITING = SELF_EDITING.replace(
    "        os.replace(here + '.new', here)\n",
    "        os.replace(here + '.new', here)\n"
    "        sys.exit(0)\n",
)
assert SELF_EDITING_THEN_EXITING != SELF_EDITING


def salts_that_played(out: Path, bot: str) -> dict[str, str]:
    """By game of ``bot``: the SALT it said in that game's log."""
    found = {}
    for record in records_of(out):
        if bot in record["players"].values():
            log = (out / "logs" / bot / "games" / f"{record['game_id']}.log").read_text()
            found[record["game_id"]] = re.search(r"^salt (-?\d+)$", log, re.M)[1]
    return found


def versions_of(out: Path, bot: str) -> set[str]:
    """The versions of ``bot`` its records name."""
    return {r["versions"][colour] for r in records_of(out) for colour, name in r["players"].items() if name == bot}


def test_a_bot_edited_mid_run_plays_the_run_as_it_started_and_the_next_run_as_edited(tmp_path):
    """The rounds of a Swiss are played by the same worker and bot processes
    (LocalExecutor.session): a bot keeps the files it started with, whose
    version the run recorded at its start (docs/tournaments.md).  So a bot
    whose file changes mid-run plays the rest of the run as it started, under
    the version recorded; the next run finds the change and, asked to
    replay it, plays its games as the edited bot, under the new version: no
    worker keeps a bot from one run to the next.  One worker, so that the
    bot process it keeps plays every game of the run."""
    path = write_league(tmp_path, ["ann", "bob", "cy", "dee"], format_settings("swiss", rounds=3), concurrency=1)
    (tmp_path / "bots" / "ann.py").write_text(SELF_EDITING.format(salt=0))
    ok(arena_here("run", path))
    out = tmp_path / "out"
    started = {bot["name"]: bot["version"] for bot in json.loads((out / "tournament.json").read_text())["bots"]}
    assert "SALT = 1\n" in (tmp_path / "bots" / "ann.py").read_text()  # edited in its first game
    assert {r["round"] for r in records_of(out) if "ann" in r["players"].values()} == {1, 2, 3}
    assert set(salts_that_played(out, "ann").values()) == {"0"}  # every round by the process it started
    assert versions_of(out, "ann") == {started["ann"]}

    stopped = arena_here("run", path)
    assert stopped.exit_code == 2 and "'ann'" in stopped.err and "changed" in stopped.err, stopped.err
    ok(arena_here("run", path, "--replay", "ann"))
    edited = {bot["name"]: bot["version"] for bot in json.loads((out / "tournament.json").read_text())["bots"]}
    assert edited["ann"] != started["ann"]
    assert set(salts_that_played(out, "ann").values()) == {"1"}
    assert versions_of(out, "ann") == {edited["ann"]}


def test_a_bot_edited_mid_run_plays_no_game_of_the_run_as_edited_whatever_the_worker(tmp_path):
    """With two workers, a bot's process may start after its files changed
    (the other worker's first start of it, a restart after a crash or to
    make room; here at least the restart, as ann exits once edited): such a
    start is refused, so each game of the run is either played by a process
    started before the edit, under the version recorded, or a
    startup_failure forfeit that names the change; the next run plays
    those as the edited bot."""
    path = write_league(tmp_path, ["ann", "bob", "cy", "dee"], format_settings("swiss", rounds=3), concurrency=2)
    (tmp_path / "bots" / "ann.py").write_text(SELF_EDITING_THEN_EXITING.format(salt=0))
    ok(arena_here("run", path))
    out = tmp_path / "out"
    started = {bot["name"]: bot["version"] for bot in json.loads((out / "tournament.json").read_text())["bots"]}
    assert "SALT = 1\n" in (tmp_path / "bots" / "ann.py").read_text()
    assert versions_of(out, "ann") == {started["ann"]}
    refused = set()
    for record in records_of(out):
        if "ann" not in record["players"].values():
            continue
        if record.get("forfeit_by") and record["players"][record["forfeit_by"]] == "ann":
            assert record["reason"] == "startup_failure", record
            assert record["detail"].startswith(
                f"its files changed since the run started (version {started['ann']} recorded, now "), record
            refused.add(record["game_id"])
            continue
        log = (out / "logs" / "ann" / "games" / f"{record['game_id']}.log").read_text()
        assert re.findall(r"^salt (-?\d+)$", log, re.M) == ["0"], record["game_id"]  # the files the run recorded
    assert refused  # ann's restart after its edit, at least

    ok(arena_here("run", path, "--replay", "ann"))
    edited = {bot["name"]: bot["version"] for bot in json.loads((out / "tournament.json").read_text())["bots"]}
    assert versions_of(out, "ann") == {edited["ann"]} != {started["ann"]}
    assert set(salts_that_played(out, "ann").values()) == {"1"}
    assert refused <= set(salts_that_played(out, "ann"))  # each refused game played now


def round_cards(page: str) -> dict[int, str]:
    """The report's card of each Swiss round, by round."""
    cards = re.findall(r'<div class="swiss-round" data-round="(\d+)">(.*?)</table>', page, re.S)
    return {int(number): card for number, card in cards}


def test_the_report_links_the_played_games_of_a_bot_that_left(tmp_path):
    bots = ["ann", "bob", "cy", "dee", "eve"]
    path = write_league(tmp_path, bots, format_settings("swiss", rounds=2), seed=3)
    ok(arena_here("run", path))
    meta = json.loads((tmp_path / "out" / "tournament.json").read_text())
    had_bye = {bot for pairing in meta["pairings"] for bot in pairing["byes"]}
    gone = next(bot for bot in bots if bot not in had_bye)  # played in both rounds
    write_league(tmp_path, [b for b in bots if b != gone], format_settings("swiss", rounds=3), seed=3)
    ok(arena_here("run", path))  # the third round, without it

    ok(arena_here("report", tmp_path / "out", "-o", tmp_path / "report.html"))
    cards = round_cards((tmp_path / "report.html").read_text())
    for number in (1, 2):
        rows = [row for row in re.findall(r"<tr.*?</tr>", cards[number], re.S) if f">{gone}<" in row or f"{gone} –" in row]
        assert len(rows) == 1, cards[number]
        assert "not played" not in rows[0], rows[0]
        assert re.search(rf'href="#game=r{number}-[^"]*{gone}[^"]*"', rows[0]), rows[0]


def test_standings_and_report_rank_the_same_bots_after_a_bot_joins_the_file(tmp_path):
    path = write_league(tmp_path, ["ann", "bob"], format_settings("round-robin"))
    ok(arena_here("run", path))
    write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))  # not run yet

    data, _ = standings(path)
    ok(arena_here("report", path, "-o", tmp_path / "report.html"))
    assert report_ranking((tmp_path / "report.html").read_text()) == [bot["name"] for bot in data["bots"]]


def test_standings_and_report_rank_the_same_bots_when_none_of_them_has_a_game_left(tmp_path):
    """Found by the model (seed 7018, knockout): both finalists leave, and
    the two bots left never met.  ``arena standings`` ranked them (0 games
    each); the report said "No games played yet" and ranked nobody."""
    bots = ["ann", "bob", "cy", "dee"]
    path = write_league(tmp_path, bots, format_settings("knockout"), seed=3)
    ok(arena_here("run", path))
    final = next(r for r in records_of(tmp_path / "out") if r["round"] == 2)
    finalists = set(final["players"].values())
    write_league(tmp_path, [b for b in bots if b not in finalists], format_settings("knockout"), seed=3)
    ok(arena_here("run", path))

    data, _ = standings(tmp_path / "out")
    ok(arena_here("report", tmp_path / "out", "-o", tmp_path / "report.html"))
    assert report_ranking((tmp_path / "report.html").read_text()) == [bot["name"] for bot in data["bots"]]


def test_a_bot_removed_another_replayed_then_the_first_back(tmp_path):
    """A bot leaves, another is changed and played again, the first comes
    back: the changed bot's games against it were played by its old version,
    which ``--replay`` asked to play again.  (The run refused with 'its
    version changed from acd5065a to acd5065a'.)"""
    bots = ["ann", "bob", "cy", "dee"]
    path = write_league(tmp_path, bots, format_settings("round-robin"))
    ok(arena_here("run", path))
    write_league(tmp_path, ["bob", "cy", "dee"], format_settings("round-robin"))
    write_bot(tmp_path, "bob", salt=1)
    ok(arena_here("run", path, "--replay", "bob"))
    before = {canonical(r) for r in records_of(tmp_path / "out")}
    write_league(tmp_path, bots, format_settings("round-robin"))

    back = arena_here("run", path)
    assert not re.search(r"changed from (\w+) to \1\b", back.err), back.err
    ok(back)
    data, _ = standings(path)
    bob = next(bot for bot in data["bots"] if bot["name"] == "bob")
    assert list(bob["versions"]) == [bob["version"]]  # every game of bob's by the version that runs now
    kept = {canonical(r) for r in records_of(tmp_path / "out") + archived_of(tmp_path / "out")}
    assert before <= kept


def test_a_bot_kept_while_another_was_away_keeps_its_games_against_it(tmp_path):
    """A knockout: bob loses its first match to cy; cy leaves, bob is changed
    and ``--keep`` keeps its old games, cy comes back: bob's games against cy
    (its only ones, by its old version) are kept too (found by the league
    soak, seed 3436: once cy was back the run refused them)."""
    bots = ["ann", "bob", "cy", "dee"]
    knockout = format_settings("knockout")
    path = write_league(tmp_path, bots, knockout)
    write_bot(tmp_path, "cy", salt=2)  # a cy that beats bob
    ok(arena_here("run", path))
    bob_games = [r for r in records_of(tmp_path / "out") if "bob" in r["players"].values()]
    assert {frozenset(r["players"].values()) for r in bob_games} == {frozenset({"bob", "cy"})}, "bob must lose to cy"
    write_league(tmp_path, ["ann", "bob", "dee"], knockout)
    write_bot(tmp_path, "bob", salt=1)
    ok(arena_here("run", path, "--keep", "bob"))
    write_league(tmp_path, bots, knockout)

    back = arena_here("run", path)
    ok(back)
    assert played(back) == 0
    data, _ = standings(path)
    bob = next(bot for bot in data["bots"] if bot["name"] == "bob")
    assert sum(bob["versions"].values()) == bob["games"] == len(bob_games) and bob["version"] not in bob["versions"]


# ---- settings that change the answer ----------------------------------------------------


@pytest.mark.parametrize("first, then, named", [
    ("elo0=0,elo1=7", "elo0=-13,elo1=0", ("7", "-13")),
    ("elo0=0,elo1=7", "elo0=0,elo1=7,alpha=0.2", ("0.05", "0.2")),
])
def test_a_match_resumed_with_another_sprt_is_refused_in_one_line(tmp_path, first, then, named):
    for name, salt in (("a", 0), ("b", 1)):
        (tmp_path / f"{name}.py").write_text(BOT_SOURCE.format(salt=salt))

    def match(sprt: str):
        return arena_here("match", f"python {tmp_path / 'a.py'}", f"python {tmp_path / 'b.py'}", "-g", "yoxii",
                     "-n", "16", "--seed", "1", "--sprt", sprt, "-o", tmp_path / "m")

    ok(match(first))
    games, meta = (tmp_path / "m" / "games.jsonl").read_bytes(), (tmp_path / "m" / "tournament.json").read_bytes()
    refused = match(then)
    assert refused.exit_code == 2, refused.err
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "sprt" in lines[0].lower(), refused.err
    for value in named:
        assert value in lines[0], lines[0]
    assert (tmp_path / "m" / "games.jsonl").read_bytes() == games
    assert (tmp_path / "m" / "tournament.json").read_bytes() == meta


# ---- signals at awkward moments ---------------------------------------------------------

#: Runs the arena with a hook: SIGTERM to itself right after it closes the
#: file descriptor of a games.jsonl that was just replaced by a rewrite (the
#: moment a --replay has archived its records and swaps the file it appends
#: to).  It touches the file named by ARENA_TEST_MARK when it fires.
CLOSE_HOOK = """
import os, runpy, signal, sys
real_close, fired = os.close, []
def close(fd):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    real_close(fd)
    if not fired and target.endswith("games.jsonl (deleted)"):
        fired.append(fd)
        open(os.environ["ARENA_TEST_MARK"], "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
os.close = close
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""

#: Runs the arena with a hook: SIGTERM to itself as the K-th process it
#: forks is made (ARENA_TEST_FORK), in the parent, where Python runs the
#: hooks of os.register_at_fork (logging's among them).  A run of 3 bots
#: forks a pre-flight process per bot, then its workers.
FORK_HOOK = """
import os, runpy, signal, sys
forks, arena = [], os.getpid()
def forked():
    if os.getpid() != arena:  # a child of the arena's, forking a bot
        return
    forks.append(1)
    if len(forks) == int(os.environ["ARENA_TEST_FORK"]):
        open(os.environ["ARENA_TEST_MARK"], "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
os.register_at_fork(after_in_parent=forked)
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""


#: Runs the arena with hooks: SIGTERM to itself as its first process is
#: forked, and again as it prints its line saying it was interrupted (a
#: second Ctrl-C, a second kill, while the arena stops).
TWICE_HOOK = """
import os, runpy, signal, sys
import rich.console
forks, arena, again = [], os.getpid(), []
def forked():
    if os.getpid() == arena and not forks:
        forks.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
os.register_at_fork(after_in_parent=forked)
real_print = rich.console.Console.print
def print_(self, *objects, **kwargs):
    if not again and any("interrupted" in str(o) for o in objects):
        again.append(1)
        open(os.environ["ARENA_TEST_MARK"], "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
    return real_print(self, *objects, **kwargs)
rich.console.Console.print = print_
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""


def test_a_second_stop_signal_while_the_arena_stops_leaves_its_one_line_whole(tmp_path):
    """Found by the league model (soak, seeds 10035 and 10041): SIGTERM sent
    twice; the second cut the arena's way out short, with a traceback in
    the middle of printing 'error: interrupted', or an error line glued to
    the progress bar, or the line that says what was kept lost."""
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))
    mark = tmp_path / "fired"
    done = hooked(TWICE_HOOK, ["run", path], ARENA_TEST_MARK=str(mark))
    assert mark.exists(), done.stderr
    assert_interrupted(done)
    assert re.fullmatch(r"error: interrupted; \d+ finished games are kept in .*out\. Run the same command to resume\.",
                        done.stderr.strip().splitlines()[-1]), done.stderr


#: Runs the arena with hooks: SIGKILL to itself as the K-th process it forks
#: is made (ARENA_TEST_FORK), and in that child half a second's sleep first,
#: so that the arena is dead before the child sets itself up to die with it.
FORK_KILL_HOOK = """
import os, runpy, signal, sys, time
forks, arena = [], os.getpid()
def forked():
    if os.getpid() == arena:
        forks.append(1)
        if len(forks) == int(os.environ["ARENA_TEST_FORK"]):
            os.kill(os.getpid(), signal.SIGKILL)
def born():
    if os.getppid() == arena and len(forks) + 1 == int(os.environ["ARENA_TEST_FORK"]):
        time.sleep(0.5)
os.register_at_fork(after_in_parent=forked, after_in_child=born)
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""


@pytest.mark.parametrize("fork", [1, 4], ids=["pre-flight", "first worker"])
def test_a_process_forked_as_the_arena_is_killed_does_not_outlive_it(tmp_path, fork):
    """Found by the league model (soak, seed 8031): a run killed with -9 as
    it forked a process left that process alive for good, holding the run's
    output open: it set itself up to die with a parent already gone, so no
    parent-death signal came and its watchdog watched the wrong parent."""
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))  # 3 pre-flight processes
    process = subprocess.Popen([sys.executable, "-c", FORK_KILL_HOOK, "run", str(path)], cwd=ROOT,
                               env={**arena_env(), "ARENA_TEST_FORK": str(fork)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert wait_for_session(process.pid, timeout=10) == []  # every process it started is gone by then


#: Runs the arena with a stop signal that lands inside a weak reference's
#: callback (as it did inside the import machinery's), where Python only
#: prints an exception: once the first game is stored.
SWALLOWED_HOOK = """
import os, runpy, signal, sys, weakref
from arena.results.store import ResultsStore
class Thing:
    pass
def callback(ref):
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100000):  # the handler runs here, between two of these
        pass
    open(os.environ["ARENA_TEST_MARK"], "w").close()
append, refs = ResultsStore.append, []
def first_append(self, record):
    append(self, record)
    if not refs:
        thing = Thing()
        refs.append(weakref.ref(thing, callback))
        del thing
ResultsStore.append = first_append
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""


def test_a_stop_signal_that_lands_where_python_only_prints_it_still_stops_the_run(tmp_path):
    """Found by the league soak (seed 5202): SIGTERM inside a weak
    reference's callback of the import machinery printed 'Exception ignored
    ... KeyboardInterrupt' and the run played on to the end.  A stop signal
    is a flag now: the callback runs to its end, and the run stops after it."""
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))
    mark = tmp_path / "fired"
    done = hooked(SWALLOWED_HOOK, ["run", path], ARENA_TEST_MARK=str(mark))
    assert mark.exists(), "the callback was cut short: the stop signal raised an exception into it"
    assert_interrupted(done)


def hooked(hook: str, args: list[object], **env: str) -> subprocess.CompletedProcess:
    process = subprocess.Popen([sys.executable, "-c", hook, *map(str, args)], cwd=ROOT, env={**arena_env(), **env},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = process.communicate(timeout=120)
    wait_for_session(process.pid)
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def assert_interrupted(done: subprocess.CompletedProcess) -> None:
    """Exit 130 and one line saying so: no traceback, no signal swallowed."""
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 130, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: interrupted"), done.stderr


def test_sigterm_while_a_replay_swaps_games_jsonl_is_one_line_and_loses_nothing(tmp_path):
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))
    ok(arena_here("run", path))
    before, seen = outcomes(tmp_path / "out"), {canonical(r) for r in records_of(tmp_path / "out")}
    mark = tmp_path / "fired"
    done = hooked(CLOSE_HOOK, ["run", path, "--replay", "bob"], ARENA_TEST_MARK=str(mark))
    assert mark.exists(), "the replay never closed the games.jsonl it replaced: " + done.stderr
    assert_interrupted(done)

    ok(arena_here("run", path, "--replay", "bob"))
    assert outcomes(tmp_path / "out") == before
    assert seen <= {canonical(r) for r in records_of(tmp_path / "out") + archived_of(tmp_path / "out")}


#: Runs the arena with a hook: SIGKILL to itself instead of putting a
#: rewritten games.jsonl in place, once replaced.jsonl exists (a --replay
#: killed between its two writes: the records archived, still in games.jsonl).
REWRITE_KILL_HOOK = """
import os, runpy, signal, sys
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    fd = kwargs.get("dst_dir_fd")
    folder = os.readlink(f"/proc/self/fd/{fd}") if fd is not None else os.path.dirname(str(dst))
    if str(dst).endswith("games.jsonl") and os.path.exists(os.path.join(folder, "replaced.jsonl")):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *args, **kwargs)
os.replace = replace
sys.argv[0] = "arena"
runpy.run_module("arena", run_name="__main__")
"""


def test_a_replay_killed_between_archive_and_rewrite_is_finished_by_a_plain_run(tmp_path):
    """Found by the model (seed 5022, gauntlet): a bot's games kept with
    --keep, the bot changed again and --replay'ed, the replay killed after it
    archived the records but before games.jsonl was rewritten: the plain run
    that followed kept the old records (their version was kept), and the
    replay asked for never happened."""
    path = write_league(tmp_path / "a", ["ann", "bob", "cy"], format_settings("round-robin"))
    ok(arena_here("run", path))
    write_bot(tmp_path / "a", "cy", salt=1)
    ok(arena_here("run", path, "--keep", "cy"))
    write_bot(tmp_path / "a", "cy", salt=2)
    shutil.copytree(tmp_path / "a", tmp_path / "twin")
    ok(arena_here("run", tmp_path / "twin" / "league.yaml", "--replay", "cy"))  # as it should end

    killed = hooked(REWRITE_KILL_HOOK, ["run", path, "--replay", "cy"])
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert archived_of(tmp_path / "a" / "out")  # killed after the archive was written
    ok(arena_here("run", path))
    assert outcomes(tmp_path / "a" / "out") == outcomes(tmp_path / "twin" / "out")


@pytest.mark.parametrize("fork", [1, 4], ids=["pre-flight", "first worker"])
def test_sigterm_while_a_process_is_forked_stops_the_run(tmp_path, fork):
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin", rounds=1))  # 3 pre-flight processes
    mark = tmp_path / "fired"
    done = hooked(FORK_HOOK, ["run", path], ARENA_TEST_MARK=str(mark), ARENA_TEST_FORK=str(fork))
    assert mark.exists(), done.stderr
    assert_interrupted(done)
    assert len(records_of(tmp_path / "out")) < 6  # it did not play on to the end
    ok(arena_here("run", path))
    assert len(records_of(tmp_path / "out")) == 6


def test_a_replay_after_a_torn_archive_line_keeps_every_record_readable(tmp_path):
    """A crash (or a full disk) in the middle of an append to replaced.jsonl
    leaves a torn last line: the next archive starts on a line of its own."""
    path = write_league(tmp_path, ["ann", "bob", "cy"], format_settings("round-robin"))
    ok(arena_here("run", path))
    bobs = {canonical(r) for r in records_of(tmp_path / "out") if "bob" in r["players"].values()}
    (tmp_path / "out" / "replaced.jsonl").write_bytes(b'{"replaced_at":"2026-01-01T00:00:00Z","reason":"--rep')

    ok(arena_here("run", path, "--replay", "bob"))
    assert bobs <= {canonical(r) for r in archived_of(tmp_path / "out")}
    assert len(lines_of(tmp_path / "out" / "replaced.jsonl")) == len(bobs) + 1  # the torn line stays, alone
