"""Every output the docs quote is what the command prints today.

A quote is a fenced block whose first line is a command, ``$ ...``: the
test runs each page's commands in order, as a reader would (from the root of
a copy of the repository's tournaments), and compares what each prints on
stdout with the lines the page shows under it, figure by figure (a command
that already ran in that copy with nothing quoted under it, as the demo's
``arena run`` opening several pages, is not run again).  Left out
of the comparison is only what depends on the machine rather than on the
games: the time stamps of a log's lines (``[0:00:07]``), a move's time
(``in 3.9 ms``), a protocol log's times (``  65.1 >``, the arena's clock),
and a ranking's ``ms/move`` and ``version`` columns (a version is a digest
of the bot's files).  A log's progress lines that the
quote does not show may come in addition, as a line every 30 seconds does
on a slow machine, and a terminal shows none; those it shows must all come.

Every other untagged block of the docs is listed in :data:`NOT_OUTPUT`,
with what it is, so that a new quote of output is a transcript or says why
not here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
STAMP = re.compile(r"^\[\d+:\d\d:\d\d\] ")
MOVE_TIME = re.compile(r" in \d+(\.\d+)? ms\b")
#: A protocol log's times: a line's ms since the game's start, the arena's clock in its frame lines.
PROTOCOL_TIME = re.compile(r"^ *\d+\.\d (?=[<>!] )")
ARENA_CLOCK = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

#: The untagged blocks that are not a command's output, by their first line.
NOT_OUTPUT = {
    "cluster: 3 nodes, 12 CPUs (head 4, worker-1 4, worker-2 4); Python 3.12.3, Ray 2.60.0":
        "a three-node cluster's start line: tests/test_ray_executor.py checks the line on a one-node Ray",
    "warning: a Ray actor was lost (its process or node died) in the middle of game r2-ann~bob-g3: it is played again":
        "a node lost mid-game: tests/test_spec_queue.py checks the line's words",
    "warning: bots run at niceness 15 on every node, not 0 as this one's: the Ray workers of node worker-2 (9be2d773) "
    "at 15 cannot go lower; for 0, start Ray there with `RAY_worker_niceness=0 ray start ...`":
        "a node that cannot lower its niceness: tests/test_ray_conditions.py checks the line on a two-node cluster",
    "Games by node (2 nodes)": "a two-node cluster's games: tests/test_tables.py checks the table's cells in every "
                               "format, tests/test_ray_executor.py the table of a run on a one-node Ray",
    "error: cluster.yaml: ray.address: cannot connect to the Ray cluster at '10.0.0.5:8265': it answers as a web "
    "server, not as a Ray head: is the port the head's? (`ray start --head` prints it; 6379 by default)":
        "a Ray address that is no Ray head: tests/test_ray_connect.py compares it with a web server at the address",
    "OXONO standings after 144 games": "the reference ladder at real time controls (minutes of play, the search bots' "
                                       "strength varying with the machine): tournaments/ladder-oxono.yaml reruns it",
    "YOXII standings after 192 games": "the reference ladder at real time controls, as above (tournaments/ladder-yoxii.yaml)",
    "python benchmarks/engine_speed.py": "commands",
    "tournaments/course/submissions/": "a directory layout",
    "name: team-cy": "a manifest's text",
    "error: bot 'team-bob' (bot.py changed;": "the league page's commands run in tests/test_league.py, which checks this line",
    "arena                                   bot": "a diagram of the protocol",
    '> {"type":"hello","protocol":1': "a protocol session written by hand (the messages' shapes are tested in test_protocol.py)",
    "cd bots/java && javac RandomBot.java": "commands",
    'arena check "./mybot" --game oxono': "commands",
    'arena match "./mybot" "python -m bots.greedy"': "a command",
    'arena match "./mybot-v2" "./mybot-v1"': "a command",
    "printf '%s\\n'": "a command",
    "stderr of team-crash, last 6 lines": "an example with a team's own paths",
    "error: cannot read DIR/games.jsonl:": "tests/test_results_dir_links.py checks the lines security.md quotes",
    "stderr of b: not read: logs/b/games/r1-g1.log is a FIFO": "tests/test_results_dir_links.py checks it",
    "warn the sandbox keeps bots from signalling to each other:": "tests/test_sandbox_channels.py checks this line",
    "demo.yaml:7: bots[1].name: duplicate bot name": "error messages for an edited file, with its line numbers",
    "demo.yaml: bots[1].cmd: bot 'greedy': no such program": "error messages with a user's own paths",
    "error: bot 'greedy' did not start, so no game was played": "error messages (tests/test_cli.py, test_preflight.py)",
    "error: bot 'mine' did not start, so no game was played": "an error message of a missing package "
                                                              "(tests/test_python_packages.py checks it)",
    "error: bot 'sly' did not start": "an error message (tests/test_preflight.py)",
    "arena check tournaments/course.yaml": "a command",
    "bot           check      games    forfeits": "an example of the check's table (tests/test_check.py checks its columns)",
    "# four OXONO openings": "an opening suite's file",
    "openings.txt:3: move 2 'Xc4 c3' is not legal": "an error message for a user's file",
    "results/demo/": "a directory layout",
    "error: bot 'team-b' (b.py changed;": "an error message with a user's paths",
    "error: cannot write /data/results/demo/games.jsonl": "an error message of a full disk",
    "error: cannot open log file '/data/results/demo/logs/b/w2.log'": "an error message of a full disk",
    "warning: results/demo/index.sqlite: rebuilt": "tests/test_game_index.py checks the line tournaments.md quotes",
    "error: /srv/course/course.yaml: python_packages: pip could not install": "an error message with a user's "
                                                                              "paths (tests/test_python_packages.py checks it)",
    "live view of results/oxono-demo: http://192.168.1.20:8000/": "a server for a room, with this machine's address: "
                                                                   "tests/test_live_sharing.py checks the lines",
    "arena ─ worker ─ listener": "a diagram of a remote bot's lines",
    "21:22:38.958 connected to ws://arena.example.org:8765/": "a bridge's lines on a team's machine: tests/test_remote.py "
                                                              "checks each kind in the bridges' logs",
    "remote: listening for remote bots on ws://127.0.0.1:8765/": "the listener's lines with teams' addresses: "
                                                                 "tests/test_remote.py checks each kind",
    "  #  bot              rating     mu    sigma    games    W    D    L  ...": "a remote bot's ranking row and note, "
                                                                               "cut: tests/test_remote.py checks them",
}


def untagged_blocks() -> list[tuple[str, str]]:
    """(page#index, text) of every untagged fenced block of the docs."""
    found = []
    for page in PAGES:
        for i, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8"))):
            if match.group(1) == "":
                found.append((f"{page.relative_to(ROOT)}#{i}", match.group(2)))
    return found


def transcripts() -> list[tuple[str, str]]:
    return [(name, text) for name, text in untagged_blocks() if text.startswith("$ ")]


def test_every_untagged_block_is_a_transcript_or_says_what_it_is():
    unknown = [f"{name}: {text.splitlines()[0]!r}" for name, text in untagged_blocks()
               if not text.startswith("$ ") and not any(text.startswith(first) for first in NOT_OUTPUT)]
    assert unknown == [], "quote a command's output as a transcript ($ command, then its output), or list it here"
    assert len(transcripts()) >= 6


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """A copy of the repository's tournaments, its bots and engine beside
    them, as the docs' commands expect to find them from the root."""
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "tournaments", root / "tournaments")
    for package in ("bots", "engine"):
        (root / package).symlink_to(ROOT / package)
    return root


@pytest.fixture(scope="module")
def silent_done() -> set[str]:
    """The commands that already succeeded in the sandbox with nothing quoted under them.  Four pages
    start with ``arena run tournaments/oxono-demo.yaml > /dev/null 2>&1``: run again it only resumes the
    finished tournament, printing nothing compared (tests/test_tournament.py tests resuming), at the cost
    of an arena's start-up and three bots'."""
    return set()


def steps(text: str) -> list[tuple[str, list[str]]]:
    """Each ``$`` command of a transcript and the lines quoted under it."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            found[-1][1].append(line)
    return found


def comparable(lines: list[str]) -> list[list[str]]:
    """The words of each line, less what depends on the machine (see the module's doc)."""
    out: list[list[str]] = []
    dropped = 0
    for line in lines:
        line = MOVE_TIME.sub(" in … ms", STAMP.sub("[h:mm:ss] ", line))
        line = ARENA_CLOCK.sub("…", PROTOCOL_TIME.sub("… ", line))
        words = line.split()
        if "ms/move" in words:  # a ranking: its last columns, from ms/move on, depend on the machine and the files
            dropped = len(words) - words.index("ms/move")
        elif not words:
            dropped = 0
        out.append(words[: len(words) - dropped] if dropped else words)
    return out


def same_output(quoted: list[str], printed: list[str]) -> list[str]:
    """The differences between a quote and what was printed (empty when alike)."""
    expected, actual = comparable(quoted), comparable(printed)
    progress = [words for words in expected if words[:1] == ["[h:mm:ss]"]]
    # Progress lines the quote does not show (a terminal shows none, a slow machine writes more) are left out.
    actual = [words for words in actual if words[:1] != ["[h:mm:ss]"] or words in progress]
    if actual == expected:
        return []
    return [f"quoted:  {' '.join(e)}\nprinted: {' '.join(a)}" for e, a in zip(expected, actual) if e != a] or [
        f"quoted {len(expected)} lines, printed {len(actual)}"]


@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("name, text", transcripts(), ids=[name for name, _ in transcripts()])
def test_a_quoted_output_is_what_the_command_prints(name, text, sandbox, silent_done):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT)}
    for command, quoted in steps(text):
        if command in silent_done:
            continue
        done = subprocess.run(["bash", "-c", command], cwd=sandbox, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{name}: {command}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        differences = same_output(quoted, done.stdout.splitlines())
        assert differences == [], f"{name}: {command}\n" + "\n".join(differences)
        if not quoted:
            silent_done.add(command)


def test_the_comparison_sees_a_stale_figure_and_passes_over_the_machines():
    quoted = ["Ranking", "  #  bot  W  ms/move  version", "  1  a   3      2.5  0123abcd", "",
              "[0:00:07] 7 of 9 games, LLR 0.31", "  move 3 in 0.2 ms"]
    printed = ["Ranking", "  #  bot  W  ms/move  version", "  1  a   3     11.0  feedbeef", "",
               "[0:00:31] 5 of 9 games, LLR 0.12", "[0:00:40] 7 of 9 games, LLR 0.31", "  move 3 in 9.9 ms"]
    assert same_output(quoted, printed) == []
    assert same_output(quoted, [line.replace("  3  ", "  4  ") for line in printed])
    log = ["=== game g1: bot a, started 2026-11-28T19:34:11.572Z (arena", "     65.1 > {\"type\":\"hello\"}"]
    assert same_output(log, ["=== game g1: bot a, started 2027-01-01T00:00:00.000Z (arena", "   1065.9 > {\"type\":\"hello\"}"]) == []
    assert same_output(log, [log[0], "     65.1 < {\"type\":\"hello\"}"])
    assert same_output(quoted, printed[:4] + printed[6:])  # a quoted progress line that no longer comes
