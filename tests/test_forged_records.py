"""games.jsonl is input too: a line edited by hand, or forged by a bot run
without the sandbox, never crashes a command, never makes one build a huge
schedule, and never gets its text to a terminal, a Markdown or HTML page or
a spreadsheet as it is.

Each bad line is skipped with a warning naming its line; every field of a
record read from disk is checked (``GameRecord.from_json``), which
hypothesis feeds arbitrary JSON for a bounded time, as it does the protocol's
reader."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from arena.bot import protocol
from arena.game.records import GameRecord, MAX_ROUND, REASONS
from arena.results.store import ResultsStore
from arena.run.results_dir import read_results
from arena.live.state import LiveState
from arena.run.config import ConfigError
from builders import FORGED_SHAPES, RANDOM_CMD, ROOT, arena, tournament, assert_one_line_error, forged_meta, records, tournament_file

pytestmark = pytest.mark.usefixtures("no_leaked_processes", "in_repo_root")

#: A terminal take-over (window title, clear screen, OSC 52 clipboard write, C1 CSI) plus markup.
HOSTILE = "\x1b]0;PWNED\x1b\\ \x1b[2J\x1b]52;c;cHduZWQ=\x07 \x9b31m"
HTML = "<img src=x onerror=alert(1)>"
#: Control characters (C0 but the line break, DEL, C1) and bidi overrides.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished tournament of three random bots (12 games); its results in ``out`` beside it."""
    directory = tmp_path_factory.mktemp("finished")
    path = tournament_file(directory)
    assert arena("run", path).exit_code == 0
    return path


def copy_results(finished: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the finished tournament (file and results) in ``tmp_path``."""
    shutil.copytree(finished.parent / "out", tmp_path / "out", ignore=shutil.ignore_patterns("scratch", ".lock"))
    return tournament_file(tmp_path), tmp_path / "out"


def write_lines(out: Path, lines: list[str]) -> None:
    (out / "games.jsonl").write_text("".join(line + "\n" for line in lines))


def forged_line(record: dict, forgery: str) -> str:
    if forgery == "round":
        return json.dumps({**record, "round": 1_000_000_000})
    if forgery == "pair":
        return json.dumps({**record, "pair": [1]})
    if forgery == "opening_moves":
        return json.dumps({**record, "opening_moves": 5})
    assert forgery == "info"  # nested 100,000 deep: deeper than any JSON parser recurses
    text = json.dumps({**record, "moves": [{**record["moves"][0], "info": "HERE"}, *record["moves"][1:]]})
    return text.replace('"HERE"', "[" * 100_000 + "]" * 100_000)


# -- each forged line of the issue, through every reading command ------------------


@pytest.mark.parametrize("command", ["standings", "report", "show", "run"])
@pytest.mark.parametrize("forgery", ["round", "pair", "opening_moves", "info"])
def test_a_forged_line_is_skipped_with_a_warning_naming_it(finished, tmp_path, forgery, command):
    path, out = copy_results(finished, tmp_path)
    games = records(out)
    write_lines(out, [json.dumps(r) for r in games[:2]] + [forged_line(games[2], forgery)]
                + [json.dumps(r) for r in games[3:]])
    started = time.monotonic()
    if command == "show":
        result = arena("show", out, games[0]["game_id"], "--final")
    elif command == "run":
        result = arena("run", path)
    else:
        result = arena(command, out)
    assert time.monotonic() - started < 60  # no schedule of a billion rounds
    assert result.exit_code == 0, result.err
    warning = f"warning: {out / 'games.jsonl'}:3: skipped an unreadable record ("
    assert warning in result.err
    if command == "run":  # the skipped game is played again, the others kept
        assert "1 games played, 11 resumed" in result.err
    if command == "standings":
        assert "after 11 games" in result.out


def test_what_each_forgery_is_told(finished, tmp_path):
    _, out = copy_results(finished, tmp_path)
    games = records(out)
    write_lines(out, [forged_line(games[0], forgery) for forgery in ("round", "pair", "opening_moves", "info")]
                + [json.dumps({**games[1], "reason": "\x1b]0;PWNED\x07"}), json.dumps({**games[2], "reason": "checkmate"})])
    warnings = [w.partition(": skipped an unreadable record ")[2] for w in ResultsStore(out).load("oxono").warnings]
    assert warnings[0] == f"(bad round 1000000000: a whole number from 0 to {MAX_ROUND - 1})"
    assert warnings[1] == "(bad pair [1])"
    assert warnings[2] == "(bad opening_moves 5)"
    assert warnings[3] == "(nested too deeply to read)"
    assert warnings[4].startswith("(bad reason '\\x1b]0;PWNED\\x07': not a known reason (alignment, exhausted, blocked, timeout")
    assert warnings[5].startswith("(bad reason 'checkmate'")


def test_a_round_within_bounds_but_beyond_the_tournament_builds_no_schedule_for_it(finished, tmp_path):
    _, out = copy_results(finished, tmp_path)
    games = records(out)
    write_lines(out, [json.dumps({**games[0], "round": MAX_ROUND - 1}),
                      json.dumps({**games[1], "round": MAX_ROUND - 1, "game_id": f"r{MAX_ROUND - 1}-x"})]
                + [json.dumps(r) for r in games[2:]])
    started = time.monotonic()
    results = read_results(out)
    assert time.monotonic() - started < 10
    # The game of the schedule keeps the schedule's round; the other is not scheduled.
    assert {r.game_id: r.round for r in results.records}[games[0]["game_id"]] == 1
    assert len(results.records) == 11
    assert any(w.startswith(f"ignored game 'r{MAX_ROUND - 1}-x'") for w in results.warnings)


def test_absurd_rounds_in_tournament_json_build_no_huge_schedule(finished, tmp_path):
    _, out = copy_results(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    (out / "tournament.json").write_text(json.dumps({**meta, "rounds": 10**9}))
    started = time.monotonic()
    result = arena("standings", out)
    assert time.monotonic() - started < 30 and result.exit_code == 0 and "after 12 games" in result.out


# -- a tournament.json of thousands of bots ------------------------------------------

#: A reader of a forged tournament.json costs what the file holds: the
#: bots and pairings, not the n² games a round-robin of them would have.
#: About 70 MB at 3,000 bots (benchmarks/forged_meta.py times it); a
#: reader that built the n² schedule or crosstable took 2 GB.
FORGED_MB = 300


def peak_mb(*args: object, timeout: float = 120) -> tuple[float, int, str]:
    """Peak resident MB, exit code and stderr of ``arena ARGS`` in a fresh process (killed after ``timeout``)."""
    process = subprocess.Popen([sys.executable, "-m", "arena", *map(str, args)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        err = process.stderr.read().decode() if process.stderr else ""
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    return usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


@pytest.mark.parametrize("shape", FORGED_SHAPES)
def test_a_forged_meta_of_3000_bots_is_read_in_the_memory_its_size_says(tmp_path, shape):
    out = forged_meta(tmp_path / "out", 3000, shape)
    for command in ("standings", "report"):
        peak, code, err = peak_mb(command, out)
        assert code == 0, err
        assert peak < FORGED_MB, f"arena {command} of a forged {shape} of 3,000 bots: {peak:.0f} MB"


def test_the_pending_games_of_a_schedule_too_big_to_make_are_refused_in_one_line(tmp_path):
    out = forged_meta(tmp_path / "out", 3000, "round-robin")
    line = assert_one_line_error(arena("standings", out, "--pending"), "--pending", "17,994,000 games")
    assert str(out) in line


def test_a_head_to_head_table_of_thousands_of_bots_is_refused_in_one_line(tmp_path):
    out = forged_meta(tmp_path / "out", 3000, "swiss")
    assert_one_line_error(arena("standings", out, "--table", "head-to-head"), "3000 bots", "9,000,000 cells", "-f json")
    shown = json.loads(arena("standings", out, "-f", "json").out)
    assert len(shown["crosstable"]) == 3000 and not any(shown["crosstable"].values())  # no bot met another


# -- pairings of tournament.json no format makes -------------------------------------

STAGED = """\
stages:
  - {format: swiss, rounds: 2}
  - {format: knockout, top: 2}
"""


@pytest.fixture(scope="module", params=["swiss", "stages"])
def paired(request, tmp_path_factory) -> Path:
    """A finished Swiss of four random bots (two rounds), or a Swiss then a
    knockout of its two best: its tournament file, its results in ``out`` beside it."""
    directory = tmp_path_factory.mktemp(request.param)
    extra = "format: swiss\n" if request.param == "swiss" else STAGED
    path = tournament_file(directory, ("a", "b", "c", "d"), extra, rounds=2 if request.param == "swiss" else None)
    assert arena("run", path).exit_code == 0
    return path


def forge_pairing(meta: dict, forgery: str) -> str:
    """``meta``'s second round forged; what the refusal names."""
    pairs = meta["pairings"][1]["pairs"]
    first = pairs[0][0]
    if forgery == "itself":
        pairs[0][1] = first
        return f"round 2 pairs {first!r} with itself"
    if forgery == "twice":
        pairs[1][0] = first
        return f"round 2 pairs {first!r} twice"
    assert forgery == "bye"
    meta["pairings"][1]["byes"] = [first]
    return f"round 2 pairs {first!r} twice"


@pytest.mark.parametrize("forgery", ["itself", "twice", "bye"])
def test_a_forged_pairing_is_refused_in_one_line_by_every_command(paired, tmp_path, forgery):
    path, out = copy_results(paired, tmp_path)
    meta_path = out / "tournament.json"
    meta = json.loads(meta_path.read_text())
    told = forge_pairing(meta, forgery)
    meta_path.write_text(json.dumps(meta))
    before = (out / "games.jsonl").read_bytes()
    for command in ("standings", "report"):
        assert_one_line_error(arena(command, out), str(meta_path), f"pairings: {told}")
    assert not (out / "report.html").exists()
    assert_one_line_error(arena("run", path), str(meta_path), f"pairings: {told}")
    assert (out / "games.jsonl").read_bytes() == before  # nothing played
    status = LiveState(out).status()
    assert status.state == "problem" and f"pairings: {told}" in status.line


# -- a bot's options and clock, from the command line and the tournament file --------

@pytest.mark.parametrize(("setting", "told"), [
    ("option.x=" + "[" * 100_000, "nests lists or mappings more than 32 deep"),
    ("option.x=" + "[" * 33 + "]" * 33, "nests lists or mappings more than 32 deep"),
    ("option.x=99999999999999999999999", "a whole number beyond ±2**53"),
    ("option.x={\"a\": [-99999999999999999999999]}", "a whole number beyond ±2**53"),
    ("tc=99999999999999999999999+0", "at most 2,147,483 seconds"),
    ("tc=10+" + "9" * 400, "at most 2,147,483 seconds"),
    ("tc=move 30000000", "at most 2,147,483 seconds"),
])
def test_a_bot_option_out_of_bounds_is_one_line(tmp_path, setting, told):
    ran = arena("match", "--bot", f"name=a,cmd={RANDOM_CMD},{setting}", "--bot", f"name=b,cmd={RANDOM_CMD}",
                "-n", "2", "-o", tmp_path / "out")
    assert_one_line_error(ran, told)
    assert len(ran.err) < 1000 and not (tmp_path / "out").exists()


def test_a_bot_option_within_bounds_is_sent_as_given():
    from arena.run.bot_option import bot_from_option  # the parser alone: no bot is started

    nested = "[" * 32 + "]" * 32
    bot = bot_from_option(f"name=a,cmd=x,option.deep={nested},option.big={2**53},option.text=\"[[\",tc=600+5")
    assert bot.options == {"deep": json.loads(nested), "big": 2**53, "text": "[["} and str(bot.time_control) == "600+5"


@pytest.mark.parametrize(("options", "told"), [
    ("{x: " + "[" * 40 + "]" * 40 + "}", "more than 32 deep"),
    ("{x: 99999999999999999999999}", "beyond ±2**53"),
    ("{x: [1, {y: -9007199254740993}]}", "beyond ±2**53"),
])
def test_a_tournament_file_option_out_of_bounds_is_one_line(tmp_path, options, told):
    with pytest.raises(ConfigError, match=re.escape(told)) as refused:
        tournament(tmp_path, 2, bot_keys=f"options: {options}")
    assert "\n" not in str(refused.value)


def test_a_tournament_file_clock_out_of_bounds_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="at most 2,147,483 seconds"):
        tournament(tmp_path, 2, time_control="99999999999999999999999+0")


# -- text from records, in every format ---------------------------------------------


def forged_text_results(directory: Path) -> Path:
    """Results whose tournament.json names bots as a forger would, and whose
    records carry a detail with escapes, HTML, pipes and a formula."""
    out = directory / "results"
    out.mkdir()
    names = ["<b>x</b>|y", '=HYPERLINK("http://t")', "@evil"]
    meta = {"name": f"cup{HTML}", "game": "oxono", "time_control": {"initial_ms": 5000, "increment_ms": 100},
            "bots": [{"name": name, "options": {}} for name in names]}
    (out / "tournament.json").write_text(json.dumps(meta))
    base = {"game": "oxono", "seed": 1, "opening": 0, "time_control": {"initial_ms": 5000, "increment_ms": 100},
            "moves": [], "scores": None, "started_at": "", "ended_at": "", "opening_moves": [], "versions": None}
    lines = [
        {**base, "game_id": "g1", "index": 0, "players": {"pink": names[0], "black": names[1]}, "winner": "black",
         "reason": "timeout", "forfeit_by": "pink", "detail": f"{HOSTILE} {HTML} | a|b \\| =1+1"},
        {**base, "game_id": "g2", "index": 1, "players": {"pink": names[1], "black": names[2]}, "winner": "pink",
         "reason": "crash", "forfeit_by": "black", "detail": f"=cmd|' /C calc'!A0 {HOSTILE}"},
        {**base, "game_id": "g3", "index": 2, "players": {"pink": names[2], "black": names[0]}, "winner": None,
         "reason": "exhausted", "forfeit_by": None, "detail": None},
        # Not shown at all, but named in a warning: escapes in a name, in a reason.
        {**base, "game_id": "g4", "index": 3, "players": {"pink": f"a{HOSTILE}", "black": "b"}, "winner": None,
         "reason": "exhausted", "forfeit_by": None, "detail": None},
        {**base, "game_id": "g5", "index": 4, "players": {"pink": "a", "black": "b"}, "winner": "pink",
         "reason": HOSTILE, "forfeit_by": "black", "detail": None},
    ]
    write_lines(out, [json.dumps(line) for line in lines])
    return out


def assert_no_control(text: str) -> None:
    assert not CONTROL.search(text), repr(text)


def assert_no_markup(text: str) -> None:
    """No markup from a record passes as markup (into HTML or Markdown)."""
    assert HTML not in text and "<b>x" not in text


@pytest.mark.parametrize("fmt", ["plain", "github", "html", "csv", "json"])
def test_standings_of_forged_records_in_every_format(tmp_path, fmt):
    out = forged_text_results(tmp_path)
    result = arena("standings", out, "-f", fmt)
    assert result.exit_code == 0, result.err
    assert_no_control(result.stdout + result.stderr)
    assert f"{out / 'games.jsonl'}:4: skipped an unreadable record (bad players" in result.err
    assert f"{out / 'games.jsonl'}:5: skipped an unreadable record (bad reason '\\x1b]0;PWNED" in result.err
    text = result.stdout
    if fmt in ("github", "html"):
        assert_no_markup(text)
    if fmt == "plain":
        assert "<b>x</b>|y" in text and "timeout on its 1st move" in text and "\\x1b]0;PWNED" in text
    elif fmt == "github":
        assert "&lt;b&gt;x&lt;/b&gt;\\|y" in text and "&lt;img" in text and "\\x1b]0;PWNED" in text
        # Every row of every table has as many cells as its header: no | from a record splits one.
        for block in text.split("\n\n"):
            rows = [line for line in block.splitlines() if line.startswith("|")]
            widths = {len(re.split(r"(?<!\\)\|", row.replace("\\\\", ""))) for row in rows}
            assert len(widths) <= 1, block
    elif fmt == "html":
        assert "&lt;b&gt;x&lt;/b&gt;|y" in text
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        bots = [row[1] for row in rows[1:]]
        assert sorted(bots) == sorted(["<b>x</b>|y", "'=HYPERLINK(\"http://t\")", "'@evil"])
        for cell in (cell for row in rows for cell in row if cell.startswith(("=", "+", "-", "@"))):
            assert cell == "-" or float(cell) is not None  # a formula would not be a number (Elo: +191)
    else:
        data = json.loads(text)
        assert sorted(b["name"] for b in data["bots"]) == sorted(["<b>x</b>|y", '=HYPERLINK("http://t")', "@evil"])
        assert text.isascii()


@pytest.mark.parametrize("fmt", ["plain", "github"])
def test_every_forfeit_of_forged_records(tmp_path, fmt):
    out = forged_text_results(tmp_path)
    result = arena("standings", out, "--forfeits", "-f", fmt)
    assert result.exit_code == 0, result.err
    assert_no_control(result.stdout + result.stderr)
    forfeits = result.stdout[result.stdout.index("\nForfeits"):]
    assert "\\x1b]0;PWNED" in forfeits and "\\x1b]52;c;" in forfeits
    if fmt == "github":
        assert_no_markup(forfeits)
        assert "&lt;img src=x" in forfeits and "a\\|b \\\\\\| =1+1" in forfeits


def test_show_of_a_forged_record(tmp_path):
    out = forged_text_results(tmp_path)
    result = arena("show", out, "g1")
    assert result.exit_code == 0, result.err
    assert_no_control(result.stdout + result.stderr)  # markup is only text to a terminal
    assert "forfeited by timeout: \\x1b]0;PWNED" in result.stdout


def test_report_of_forged_records(tmp_path):
    out = forged_text_results(tmp_path)
    result = arena("report", out)
    assert result.exit_code == 0, result.err
    page = (out / "report.html").read_text()
    assert_no_control(page)
    assert_no_markup(page)
    assert "cup&lt;img src=x onerror=alert(1)&gt;" in page


# -- arbitrary input, for a bounded time ------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)
#: A record the store accepts, to vary one field at a time.
VALID = {
    "game_id": "r1-a~b-g1", "game": "oxono", "players": {"pink": "a", "black": "b"}, "seed": 5, "opening": 1,
    "time_control": {"initial_ms": 5000, "increment_ms": 100},
    "moves": [{"move": "Xc5 c6", "ms": 1.5, "info": {"depth": 2, "pv": ["Xc5 c6"]}}],
    "winner": "black", "reason": "timeout", "scores": None, "forfeit_by": "pink", "detail": "no move",
    "started_at": "", "ended_at": "", "index": 0, "round": 1, "opening_moves": [], "pair": 0, "versions": {"pink": "1", "black": "2"},
    "time_controls": {"pink": {"per_move_ms": 500}, "black": {"initial_ms": 5000, "increment_ms": 100}},
}
FIELDS = sorted(VALID) + ["move", "ms", "info"]
PROPERTY = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def shaped(field: str, value: object) -> object:
    """``VALID`` with ``field`` (of the record, or of its move) set to ``value``."""
    record = json.loads(json.dumps(VALID))
    if field in ("move", "ms", "info"):
        record["moves"][0][field] = value
    else:
        record[field] = value
    return record


def test_the_valid_record_is_valid():
    assert GameRecord.from_json(VALID).reason == "timeout" and "timeout" in REASONS


@PROPERTY
@given(st.one_of(JSON_VALUES, st.builds(shaped, st.sampled_from(FIELDS), JSON_VALUES)))
def test_from_json_raises_only_value_error(data):
    try:
        record = GameRecord.from_json(data)
    except ValueError as exc:
        assert not CONTROL.search(str(exc)) and len(str(exc)) < 300  # a warning printed as it is
    else:
        assert record.reason in REASONS and all(name.isprintable() for name in record.players.values())


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


LINES = st.one_of(
    JSON_VALUES.map(json.dumps),
    st.builds(shaped, st.sampled_from(FIELDS), JSON_VALUES).map(json.dumps),
    st.integers(1, 200_000).map(deep),
    st.text(max_size=60).filter(lambda s: "\n" not in s and "\r" not in s),
)


@PROPERTY
@given(st.lists(LINES, max_size=6))
def test_the_store_reads_any_file_with_a_warning_per_bad_line(tmp_path_factory, lines):
    out = tmp_path_factory.mktemp("games")
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    (out / "games.jsonl").write_bytes(data)
    loaded = ResultsStore(out).load("oxono")
    # Each line the store reads is a record or a warning naming it.
    assert len(loaded.records) + len(loaded.warnings) == len([line for line in data.splitlines() if line.strip()])
    for warning in loaded.warnings:
        assert re.match(rf"{re.escape(str(out / 'games.jsonl'))}:\d+: skipped ", warning) and not CONTROL.search(warning)


@PROPERTY
@given(st.one_of(JSON_VALUES.map(json.dumps), st.text(max_size=80), st.integers(1, 200_000).map(deep),
                 st.dictionaries(st.sampled_from(["type", "move", "info"]), JSON_VALUES).map(json.dumps)),
       st.sampled_from(["ready", "move"]))
def test_the_protocol_reader_raises_only_protocol_error(line, expected):
    try:
        message = protocol.decode(line, expected)
    except protocol.ProtocolError as exc:
        assert len(str(exc)) < 400
    else:
        assert isinstance(message, dict) and message.get("type") in ("error", expected)
        info = protocol.bound_info(message.get("info"))  # what the referee keeps of it: never raises either
        assert info is None or isinstance(info, dict)


# -- where a game was played ------------------------------------------------------------


def test_a_local_runs_records_name_the_host_and_worker(finished):
    games = records(finished.parent / "out")
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    assert {(r["played_on"]["host"], r["played_on"]["nice"]) for r in games} == {(socket.gethostname(), nice)}
    assert {r["played_on"]["worker"] for r in games} <= set(range(1, 10))


def test_records_without_played_on_read_as_before_and_show_as_not_recorded(finished, tmp_path):
    _, out = copy_results(finished, tmp_path)
    games = [{k: v for k, v in r.items() if k != "played_on"} for r in records(out)]
    write_lines(out, [json.dumps(r) for r in games])
    loaded = ResultsStore(out).load("oxono")
    assert loaded.warnings == [] and len(loaded.records) == 12
    assert {r.played_on for r in loaded.records} == {None}
    table = arena("standings", out, "--table", "nodes", "-f", "csv")
    assert table.exit_code == 0, table.err
    rows = list(csv.DictReader(io.StringIO(table.out)))
    assert [(r["node"], r["games"]) for r in rows] == [("", "12")]
    shown = arena("standings", out, "--table", "nodes").out
    assert "(not recorded)" in shown and arena("standings", out, "--by", "node").out == shown
    for wrong, said in ((("--by", "bot"), "--by: unknown 'bot'; use node"),
                        (("--by", "node", "--table", "elo"), "--by node shows the nodes table; --table elo asks for another")):
        assert_one_line_error(arena("standings", out, *wrong), said)


@pytest.mark.parametrize("place, told", [
    ({"host": "h" * 254}, "(bad played_on (dict of 1))"),
    ({"host": "h", "actor": "1"}, "(bad played_on {'host': 'h', 'actor': '1'})"),
    ({"host": "h", "nice": 40}, "(bad played_on {'host': 'h', 'nice': 40})"),
    ({"host": HOSTILE}, "(bad played_on (dict of 1))"),
    ({"node_id": "n"}, "(bad played_on {'node_id': 'n'})"),
    ({"host": "h", "rack": 1}, "(bad played_on {'host': 'h', 'rack': 1})"),
    ("h", "(bad played_on 'h')"),
])
def test_a_forged_played_on_is_skipped_with_the_lines_warning(finished, tmp_path, place, told):
    _, out = copy_results(finished, tmp_path)
    games = records(out)
    write_lines(out, [json.dumps({**games[0], "played_on": place})] + [json.dumps(r) for r in games[1:]])
    result = arena("standings", out, "--table", "nodes")
    assert result.exit_code == 0, result.err
    assert f"warning: {out / 'games.jsonl'}:1: skipped an unreadable record {told}" in result.err
    assert "after 11 games" in result.out and not CONTROL.search(result.out + result.err)


@pytest.mark.parametrize("cluster, told", [
    ({"python": "3", "ray": "2", "nodes": [{"host": "h" * 254, "node_id": "n", "cpus": 2}]}, "cluster.nodes[0].host"),
    ({"python": "3", "ray": "2", "nodes": [{"host": HOSTILE, "node_id": "n", "cpus": 2}]}, "cluster.nodes[0].host"),
    ({"python": "3", "ray": "2", "nodes": [{"host": "h", "node_id": "n", "cpus": True}]}, "cluster.nodes[0].cpus"),
    ({"python": "3", "ray": "2", "nodes": "all"}, "cluster.nodes: Expected `array`, got `str`"),
    ({"python": ["3"], "ray": "2", "nodes": []}, "cluster.python"),
])
def test_a_forged_cluster_in_tournament_json_is_refused_in_one_line(finished, tmp_path, cluster, told):
    from arena.results.meta import MetaError, read_meta

    _, out = copy_results(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    (out / "tournament.json").write_text(json.dumps({**meta, "cluster": cluster}))
    with pytest.raises(MetaError) as refused:
        read_meta(out)
    assert told in str(refused.value) and "\n" not in str(refused.value) and not CONTROL.search(str(refused.value))


@pytest.mark.parametrize("field, value, told", [
    ("network_margin_ms", {"pink": -1}, "(bad network_margin_ms {'pink': -1})"),
    ("network_margin_ms", {"green": 5}, "(bad network_margin_ms {'green': 5})"),
    ("network_margin_ms", 5, "(bad network_margin_ms 5)"),
    ("latency_ms", float("nan"), "(bad move latency_ms nan)"),
    ("latency_ms", "12", "(bad move latency_ms '12')"),
    ("latency_ms", True, "(bad move latency_ms True)"),
])
def test_a_forged_network_figure_is_skipped_with_the_lines_warning(finished, tmp_path, field, value, told):
    _, out = copy_results(finished, tmp_path)
    games = records(out)
    first = dict(games[0])
    if field == "latency_ms":
        first["moves"] = [{**first["moves"][0], "latency_ms": value}, *first["moves"][1:]]
    else:
        first[field] = value
    write_lines(out, [json.dumps(first)] + [json.dumps(r) for r in games[1:]])
    result = arena("standings", out)
    assert result.exit_code == 0, result.err
    assert f"warning: {out / 'games.jsonl'}:1: skipped an unreadable record {told}" in result.err


def test_a_remote_bots_network_figures_are_read_back_as_written(finished, tmp_path):
    _, out = copy_results(finished, tmp_path)
    games = records(out)
    first = {**games[0], "network_margin_ms": {"black": 201.5},
             "moves": [{**move, "latency_ms": 200.2} if i % 2 else move for i, move in enumerate(games[0]["moves"])]}
    write_lines(out, [json.dumps(first)] + [json.dumps(r) for r in games[1:]])
    loaded = {r.game_id: r for r in ResultsStore(out).load().records}[first["game_id"]]
    assert loaded.network_margin_ms == {"black": 201.5}
    assert [m.latency_ms for m in loaded.moves] == [200.2 if i % 2 else None for i in range(len(loaded.moves))]
    assert json.loads(loaded.to_line()) == first
