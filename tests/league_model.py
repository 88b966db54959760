"""A model of a league under disruption, driven through the ``arena`` command.

A run that is stopped is a process of its own (its signals are what is
checked); a run left to finish, the reference's every run among them, is
the same command in this process (:func:`arena_run_here`), which saves each
the interpreter's start-up and the arena's import.

A *league* is a directory holding a tournament file, one small deterministic
bot per file (``bots/<name>.py``: its moves follow from the game's seed and
the ``SALT`` written in it, so a game played again gives the same game) and
the results directory ``out/``.  :func:`run_sequence` plays a random
sequence of events on two leagues side by side: the *subject*, whose runs
are killed (SIGTERM or SIGKILL, at a random moment) and resumed, whose
``games.jsonl`` loses lines and whose ``index.sqlite`` is damaged; and the *reference*, where the same events
happen with every run left to finish.  After each step it checks:

- the subject's run ended as the docs promise: after SIGTERM, exit 130 and
  one ``error: interrupted`` line, never a traceback, never a signal
  swallowed (``Exception ignored``); resuming (the same command, or a plain
  ``arena run FILE`` once a ``--replay`` or ``--keep`` has written what it
  decided) ends with exit 0, or with the documented refusal of a changed
  bot, answered with the same ``--replay``/``--keep``;
- ``arena standings -f json`` reads the same from the tournament file, the
  results directory, its ``games.jsonl`` and a copy of the directory where
  no index can be made (the log alone), with no warning of a game the
  tournament does not schedule, and ranks the bots in the order of the
  report's ranking table;
- every record ever seen in ``games.jsonl`` is still there or in
  ``replaced.jsonl`` (save those the driver itself destroyed);
- the subject's games and standings are the reference's: with deterministic
  bots, no disruption changes the results.

The formats: round-robin, gauntlet, reference, swiss, knockout, stages
(a Swiss, then a knockout of its top 4), an SPRT match (``arena match
-o DIR --sprt``, of OXONO; the others play YOXII) and adaptive (16 games at most).  Used by ``tests/test_league_model.py`` (a short
sequence a format, for CI: two events chosen, the first run always stopped)
and ``scripts/league_soak.py`` (random events, for as long as you like).
"""

from __future__ import annotations

import contextlib
import functools
import html.parser
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.base.processes import descendants
from arena.results.game_index import INDEX_FILE
from builders import ROOT, tournament_file

#: A deterministic bot: its moves follow from SALT and the game's seed; a
#: negative SALT is a broken version, which exits before it says ``ready``.
#: It thinks 20 ms a move while a file ``SLOW`` is in its working directory,
#: so that a test can catch a run in the middle (the file is not part of the
#: bot's version: only the files its command names are).
BOT_SOURCE = '''\
import json, os, random, sys, time
SALT = {salt}
if SALT < 0:
    sys.exit(3)
rng = random.Random()
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        print(json.dumps({{"type": "ready", "name": "model"}}), flush=True)
    elif kind == "new_game":
        rng = random.Random(f"{{SALT}}:{{message.get('seed')}}")
    elif kind == "turn":
        if os.path.exists("SLOW"):
            time.sleep(0.02)
        print(json.dumps({{"type": "move", "move": rng.choice(message["legal_moves"])}}), flush=True)
    elif kind == "quit":
        break
'''

NAMES = ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo", "kim", "lu")
FORMATS = ("round-robin", "gauntlet", "reference", "swiss", "knockout", "stages", "sprt", "adaptive")
#: Every kind of event (:meth:`Driver.step` says what each does; ``more`` is
#: the SPRT match's alone, and it has no other than ``run`` and the damage).
EVENTS = ("run", "late", "change", "break", "shuffle", "tear", "delete", "garble", "remove", "back", "rounds", "more",
          "index")
#: What the ``index`` event does to the subject's ``index.sqlite`` (derived from
#: ``games.jsonl``, so that none of it may change an answer).
INDEX_DAMAGE = ("delete", "older", "truncate", "garble")

#: How a run may be stopped, as a user or the system would: the signal, and
#: whether it comes twice (an impatient Ctrl-C, a service manager's stop).
KILLS = ((signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGKILL, False))


def write_bot(directory: Path, name: str, salt: int = 0) -> None:
    (directory / "bots").mkdir(parents=True, exist_ok=True)
    (directory / "bots" / f"{name}.py").write_text(BOT_SOURCE.format(salt=salt))


def format_settings(fmt: str, rounds: int | None = None, top: int = 4) -> str:
    """The tournament file's lines for ``fmt`` (not for ``sprt``, a match):
    ``rounds`` are a Swiss's (2 unless given), or those of a format fixed in
    advance (1 unless given)."""
    rounds = rounds or (2 if fmt in ("swiss", "stages") else 1)
    more = f"rounds: {rounds}\n" if rounds > 1 else ""
    return {
        "round-robin": f"format: round-robin\n{more}",
        "gauntlet": f"format: gauntlet\n{more}",
        "reference": f"format: reference\nreference: [{NAMES[0]}]\n{more}",
        "swiss": f"format: swiss\nrounds: {rounds}\n",
        "knockout": "format: knockout\ntiebreak_pairs: 1\n",
        "adaptive": "format: adaptive\nmax_games: 16\nsettle: {confidence: 0.9, within_elo: 100}\n",
        "stages": f"stages:\n  - {{format: swiss, rounds: {rounds}}}\n"
                  f"  - {{format: knockout, top: {top}, tiebreak_pairs: 1}}\n",
    }[fmt]


def write_league(directory: Path, bots: Sequence[str], settings: str, *, seed: int = 1, game: str = "yoxii",
                 concurrency: int = 2) -> Path:
    """The tournament file ``league.yaml`` of ``bots`` (each ``bots/<name>.py``,
    written with salt 0 if missing), results in ``out``."""
    for name in bots:
        if not (directory / "bots" / f"{name}.py").exists():
            write_bot(directory, name)
    return tournament_file(directory, bots, settings, file="league.yaml", cmds={n: f"python bots/{n}.py" for n in bots},
                           cwd=None, name="league", game=game, rounds=None, concurrency=concurrency, seed=seed)


# ---- the arena command ---------------------------------------------------------------


@dataclass
class Result:
    exit_code: int
    out: str
    err: str
    seconds: float = 0.0
    #: A signal was sent to it (it had not ended by then).
    signalled: bool = False
    #: The processes it started that were still there well after it ended (then killed).
    outlived: list[str] = field(default_factory=list)


def arena_env() -> dict[str, str]:
    # The tree these tests belong to first, whatever is installed.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def arena_command(*args: object) -> list[str]:
    return [sys.executable, "-m", "arena", *(str(a) for a in args)]


def arena(*args: object, timeout: float = 300) -> Result:
    """``arena ARGS`` in a process of its own, to the end."""
    return arena_killed(args, None, lambda t: False, timeout)


def arena_run_here(*args: object) -> Result:
    """``arena ARGS`` to the end in this process, as a run no signal stops is
    driven (the same command, its games played by the same workers and bots):
    a process of its own would add the interpreter's start-up and the
    arena's import, most of a run's CPU here.  From the repository, as
    :func:`arena` runs (``python -m bots.greedy`` is found there); the
    processes it started that are still there :data:`OUTLIVE_S` after it
    ended are killed and named in :attr:`Result.outlived`."""
    before = set(descendants([os.getpid()]))
    with contextlib.chdir(ROOT):
        result = arena_here(*args)
    end = time.monotonic() + OUTLIVE_S
    while (left := set(descendants([os.getpid()])) - before) and time.monotonic() < end:
        time.sleep(0.02)
    result.outlived += [f"{pid} ({_command_line(pid)})" for pid in left]
    for pid in left:
        _kill(pid)
    return result


@functools.cache
def start_up_s() -> float:
    """The seconds (wall) a process of the arena takes before it reads its
    command: measured once, since a run driven in this process does not pay
    it, and the moment a process is stopped is drawn from such a run's length."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "import arena.cli"], cwd=ROOT, env=arena_env(), check=True)
    return time.monotonic() - start


#: How long the processes an arena started may outlive it (a worker
#: outlives a ``kill -9`` of the arena by a moment, holding the lock).
OUTLIVE_S = 10.0


def arena_killed(args: Sequence[object], signum: int | None, when: Callable[[float], bool],
                 timeout: float = 300, again: float | None = None) -> Result:
    """``arena ARGS`` in a process of its own (a session of its own), sent
    ``signum`` (the main process only, as ``kill PID`` does) once ``when(
    seconds since the start)`` is true, unless it ended first (and once more
    ``again`` seconds later, if it still runs then).  The
    processes it started get :data:`OUTLIVE_S` to end after it; those still
    there are killed and named in :attr:`Result.outlived`.  Raises
    :class:`Violation` when the arena itself has not ended after ``timeout``."""
    start = time.monotonic()
    process = subprocess.Popen(arena_command(*args), cwd=ROOT, env=arena_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    signalled, outlived, ended = False, [], None
    try:
        while signum is not None and process.poll() is None and not when(time.monotonic() - start):
            time.sleep(0.002)
        if signum is not None and process.poll() is None:
            process.send_signal(signum)
            signalled = True
            if again is not None:
                time.sleep(again)
                if process.poll() is None:
                    process.send_signal(signum)
        while True:
            try:
                # In slices: a process it started may hold its output open after it ended.
                out, err = process.communicate(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if process.poll() is None and now - start > timeout:
                    raise Violation(f"arena {args[0]} still runs after {timeout:.0f} s"
                                    + (f" ({signal.Signals(signum).name} sent)" if signalled else "")) from None
                if process.poll() is not None:
                    ended = ended or now
                    if now - ended > OUTLIVE_S:
                        outlived += wait_for_session(process.pid, 0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    outlived += wait_for_session(process.pid, OUTLIVE_S)
    return Result(process.returncode, out, err, time.monotonic() - start, signalled, outlived)


def wait_for_session(sid: int, timeout: float = 15.0) -> list[str]:
    """Wait until no process of session ``sid`` is left; SIGKILL those still
    there after ``timeout`` seconds, and return their command lines."""
    end = time.monotonic() + timeout
    while (left := _session(sid)) and time.monotonic() < end:
        time.sleep(0.02)
    described = [f"{pid} ({_command_line(pid)})" for pid in left]
    for pid in left:
        _kill(pid)
    return described


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "gone"


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _session(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


# ---- reading a results directory -----------------------------------------------------


def lines_of(path: Path) -> list[bytes]:
    """The complete lines of a file (a torn last line is not one)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return data[: data.rfind(b"\n") + 1].splitlines()


def records_of(directory: Path) -> list[dict[str, Any]]:
    """The readable records of ``games.jsonl``."""
    out = []
    for line in lines_of(directory / "games.jsonl"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("game_id"), str):
            out.append(record)
    return out


def archived_of(directory: Path) -> list[dict[str, Any]]:
    """The records in ``replaced.jsonl``."""
    out = []
    for line in lines_of(directory / "replaced.jsonl"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("record"), dict):
            out.append(entry["record"])
    return out


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True)


def outcome(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a deterministic replay of a game gives again (not its times)."""
    return (record["players"], record.get("winner"), record.get("reason"), record.get("forfeit_by"),
            [m["move"] for m in record.get("moves", [])], record.get("versions"), record.get("opening_moves"))


def outcomes(directory: Path) -> dict[str, tuple[Any, ...]]:
    return {r["game_id"]: outcome(r) for r in records_of(directory)}


_TIMES = re.compile(r"(^|_)ms$|_ms_|^ms_")


def without_times(value: Any) -> Any:
    """Standings JSON without what depends on the clock (milliseconds a move)
    and on which worker took which game (the table of nodes)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if not _TIMES.search(k) and k != "nodes"}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


class _RankingTable(html.parser.HTMLParser):
    """The bot column of the report's ranking table (``data-table="ranking"``)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside the ranking table
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("data-table", "ranking") in attrs and not self.rows:
            self.depth = 1
        elif self.depth and tag == "table":
            self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None
        elif self.depth and tag == "table":
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def report_ranking(page: str) -> list[str]:
    """The bots of the report's ranking table, in its order."""
    table = _RankingTable()
    table.feed(page)
    if not table.rows:
        return []
    column = table.rows[0].index("bot")
    return [row[column] for row in table.rows[1:] if len(row) > column]


# ---- the model -----------------------------------------------------------------------


class Violation(Exception):
    """An invariant that does not hold; ``str()`` says which and how."""


@dataclass
class League:
    """One results directory and what made it: its file, its bots, their salts."""

    directory: Path
    fmt: str
    seed: int
    #: Every bot ever in it, in the order they joined.
    order: list[str]
    #: The bots in the file, in its order.
    present: list[str]
    #: Each bot's SALT (negative: a broken version).
    salts: dict[str, int]
    rounds: int = 1
    #: The SPRT match's limit on games.
    games: int = 24

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for name in self.order:
            write_bot(self.directory, name, self.salts.get(name, 0))
        self.write()

    @property
    def out(self) -> Path:
        return self.directory / "out"

    @property
    def file(self) -> Path:
        return self.directory / "league.yaml"

    def write(self) -> None:
        if self.fmt != "sprt":
            # A bot that cannot start loses its games; the others play on.
            write_league(self.directory, self.present,
                         format_settings(self.fmt, self.rounds) + "startup_failures: forfeit\n", seed=self.seed)

    def set_salt(self, name: str, salt: int) -> None:
        self.salts[name] = salt
        write_bot(self.directory, name, salt)

    def command(self, *flags: str) -> list[object]:
        """The command of a run: ``arena run FILE [flags]``, or the SPRT match's."""
        if self.fmt == "sprt":
            bot = self.directory.parent / "match-bot.py"
            # OXONO: greedy's look-ahead costs some 0.4 CPU s a YOXII game and 0.05 an OXONO one;
            # the match is decided after 8 games here, as after 10 in YOXII.
            return ["match", f"python {bot}", "python -m bots.greedy", "-g", "oxono", "--tc", "10+0.1",
                    "-n", self.games, "--seed", self.seed, "--sprt", "elo0=-100,elo1=100", "-o", self.out]
        return ["run", self.file, *flags]


@dataclass
class Sequence_:
    """What one sequence did: its steps, as lines to read and to reproduce."""

    seed: int
    fmt: str
    steps: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    runs: int = 0

    def describe(self) -> str:
        lines = [f"seed {self.seed}, format {self.fmt}:"] + [f"  {n}. {s}" for n, s in enumerate(self.steps, 1)]
        return "\n".join(lines + [f"  VIOLATION: {v}" for v in self.violations])


class Driver:
    """Runs one sequence: events on the subject and the reference, checks after each step."""

    def __init__(self, seed: int, fmt: str, workdir: Path, avoid: frozenset[str] = frozenset()) -> None:
        self.rng = random.Random(seed)
        self.avoid = avoid
        self.log = Sequence_(seed, fmt)
        self.fmt = fmt
        rng = self.rng
        if fmt == "sprt":
            bots = ["match-bot", "greedy"]  # as arena match names them
        else:
            size = {"round-robin": 4, "gauntlet": 4, "reference": 4, "swiss": 5, "knockout": 4, "stages": 5,
                    "adaptive": 5}[fmt]
            bots = list(NAMES[:size])
        salts = {name: 0 for name in bots}
        tournament_seed = rng.randrange(1000)
        rounds = 2 if fmt in ("swiss", "stages") else 1
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "match-bot.py").write_text(BOT_SOURCE.format(salt=0))
        self.subject, self.reference = (
            League(workdir / name, fmt, tournament_seed, list(bots), list(bots), dict(salts), rounds)
            for name in ("subject", "reference"))
        #: Every record seen in the subject's games.jsonl, by its canonical text.
        self.seen: dict[str, str] = {}
        #: How long the reference's last run took, to draw a kill's moment from.
        self.duration = 1.5

    # -- events -----------------------------------------------------------------------

    def events(self) -> list[str]:
        """The events that may happen now (none of :attr:`avoid`)."""
        return [event for event in self._events() if event not in self.avoid] or ["run"]

    def _events(self) -> list[str]:
        league = self.subject
        if self.fmt == "sprt":
            return ["run", "more", "tear", "delete", "garble", "index"]
        present, departed = league.present, [n for n in league.order if n not in league.present]
        found = ["run", "late", "change", "break", "shuffle", "tear", "delete", "garble", "index"]
        if self._removable():
            found.append("remove")
        if departed:
            found.append("back")
        if (self.fmt == "swiss" and league.rounds + 1 < len(present)) or \
                (self.fmt in ("round-robin", "gauntlet", "reference") and league.rounds < 2):
            found.append("rounds")
        return found

    def _removable(self) -> list[str]:
        league = self.subject
        least = {"swiss": league.rounds + 1, "stages": max(league.rounds + 1, 4)}.get(self.fmt, 2)
        if len(league.present) - 1 < least:
            return []
        keep = {league.order[0]} if self.fmt in ("gauntlet", "reference") else set()
        return [n for n in league.present if n not in keep]

    def step(self, event: str | None = None) -> None:
        """One event, ``event`` or else one drawn from those that may happen
        now, on both leagues; the subject's run killed and resumed at random;
        then the checks."""
        if event is None:
            event = self.rng.choice(self.events())
        elif event not in self._events():
            raise ValueError(f"event {event!r} cannot happen now in a {self.fmt} league (it may: {self._events()})")
        flags: tuple[str, ...] = ()
        both = (self.subject, self.reference)
        text = event
        if event == "late":
            name = NAMES[len(self.subject.order)] if len(self.subject.order) < len(NAMES) else None
            if name is None:
                event = text = "run"
            else:
                for league in both:
                    league.order.append(name)
                    league.present.append(name)
                    league.salts[name] = 0
                    write_bot(league.directory, name)
                    league.write()
                text = f"late bot {name}"
        elif event in ("change", "break"):
            # A change of a broken bot fixes it; a break makes it exit at once.
            name = self.rng.choice(self.subject.present)
            salt = abs(self.subject.salts[name]) + 1
            salt = -salt if event == "break" else salt
            for league in both:
                league.set_salt(name, salt)
            flags = (self.rng.choice(("--replay", "--keep")), name)
            text = f"{event} {name} (salt {salt}), then {' '.join(flags)}"
        elif event == "shuffle":
            first = self.subject.present[:1] if self.fmt == "gauntlet" else []  # the challenger stays first
            rest = [n for n in self.subject.present if n not in first]
            self.rng.shuffle(rest)
            for league in both:
                league.present = first + rest
                league.write()
            text = f"reorder the file: {', '.join(first + rest)}"
        elif event == "remove":
            name = self.rng.choice(self._removable())
            for league in both:
                league.present.remove(name)
                league.write()
            text = f"remove {name}"
        elif event == "back":
            name = self.rng.choice([n for n in self.subject.order if n not in self.subject.present])
            for league in both:
                league.present.append(name)
                league.write()
            text = f"put {name} back"
        elif event == "rounds":
            for league in both:
                league.rounds += 1
                league.write()
            text = f"rounds: {self.subject.rounds}"
        elif event == "more":
            for league in both:
                league.games += 6
            text = f"-n {self.subject.games}"
        elif event in ("tear", "delete", "garble"):
            text = self._damage(event)
        elif event == "index":
            text = self._damage_index(self.rng.choice(INDEX_DAMAGE))
        self.log.steps.append(text)
        if event in ("change", "break") and self.rng.random() < 0.5:
            self._expect_refusal(self.reference, flags[1], self.log.steps[-1])
        self._run_reference(flags)
        kills = self._run_subject(flags)
        if kills:
            self.log.steps[-1] += "; " + ", ".join(kills)
        self.check()

    def _damage(self, how: str) -> str:
        """Tear the last line of the subject's games.jsonl, delete a line, or make one unreadable."""
        path = self.subject.out / "games.jsonl"
        lines = lines_of(path)
        # Only a game of the bots in the tournament is played again (one of a
        # bot that left would be lost until it comes back), and only one
        # played by their versions of now gives the same game again (not one
        # kept with --keep).
        playable = [i for i, line in enumerate(lines) if _replayable(line, self._versions())]
        if not playable or (how == "tear" and playable[-1] != len(lines) - 1):
            return f"{how}: no line to damage"
        index = len(lines) - 1 if how == "tear" else self.rng.choice(playable)
        try:
            record = json.loads(lines[index])
            self.seen.pop(canonical(record), None)  # destroyed here, not lost by the arena
            game = record.get("game_id")
        except ValueError:
            game = "?"
        if how == "tear":
            lines[index] = lines[index][: len(lines[index]) // 2]
            path.write_bytes(b"".join(line + b"\n" for line in lines[:-1]) + lines[-1])
        elif how == "delete":
            del lines[index]
            path.write_bytes(b"".join(line + b"\n" for line in lines))
        else:
            lines[index] = b'{"game_id": "' + str(game).encode() + b'", "garbled": tru'
            path.write_bytes(b"".join(line + b"\n" for line in lines))
        return f"{how} line {index + 1} of games.jsonl ({game})"

    def _damage_index(self, how: str) -> str:
        """Delete the subject's index, make it look older, cut it, or overwrite a part of it."""
        path = self.subject.out / INDEX_FILE
        if not path.exists():
            return f"index {how}: no index yet"
        if how == "delete":
            for suffix in ("", "-wal", "-shm", "-journal"):
                (self.subject.out / (INDEX_FILE + suffix)).unlink(missing_ok=True)
        elif how == "older":
            with sqlite3.connect(path) as db:
                db.execute("UPDATE state SET value = 0 WHERE key = 'version'")
            db.close()
        else:
            size = path.stat().st_size
            with open(path, "r+b") as file:
                if how == "truncate":
                    file.truncate(size // 2)
                else:
                    file.seek(self.rng.randrange(size))
                    file.write(bytes(self.rng.randrange(256) for _ in range(min(4096, size))))
        return f"index {how}"

    def _versions(self) -> dict[str, str]:
        """The version of each bot in the tournament, as its last run wrote them down."""
        meta = json.loads((self.subject.out / "tournament.json").read_text())
        return {bot["name"]: bot["version"] for bot in meta["bots"] if "version" in bot}

    # -- runs -------------------------------------------------------------------------

    def _expect_refusal(self, league: League, name: str, step: str) -> None:
        """A plain run stops when bot ``name``, just changed, has games with
        the bots in the tournament played by a version not kept (--keep)
        (see docs/tournaments.md, Versions)."""
        meta = json.loads((league.out / "tournament.json").read_text())
        kept = next((set(b.get("earlier_versions", [])) for b in meta["bots"] if b["name"] == name), set())
        # A game forfeited unplayed (a bot that did not start) is played again anyway.
        stale = [r for r in records_of(league.out) if set(r["players"].values()) <= set(league.present)
                 and r.get("reason") not in ("startup_failure", "withdrawn")
                 and any(n == name and r["versions"][c] not in kept for c, n in r["players"].items())]
        if not stale:
            return
        result = arena_run_here(*league.command())
        self.log.runs += 1
        if result.exit_code != 2 or "changed since" not in result.err:
            raise Violation(f"after '{step}', a plain run of the reference was not refused for the changed bot "
                            f"(exit {result.exit_code}): {_last_line(result.err)}")

    def _run_reference(self, flags: tuple[str, ...]) -> None:
        result = arena_run_here(*self.reference.command(*flags))
        self.log.runs += 1
        self.duration = max(0.3, result.seconds) + start_up_s()
        self._check_exit(result, None, ["the reference's run"])
        if result.exit_code != 0:
            raise Violation(f"the reference's uninterrupted run ({' '.join(map(str, flags)) or 'no flags'}) "
                            f"exited {result.exit_code}: {_last_line(result.err)}")

    def _run_subject(self, flags: tuple[str, ...], stop: bool = False) -> list[str]:
        """Run the step's command on the subject, killed and resumed at random
        (its first attempt always stopped when ``stop``), to the end."""
        command = self.subject.command(*flags)
        said: list[str] = []
        for attempt in range(8):
            kill = (self.rng.random() < (0.6 if attempt == 0 else 0.3) or (stop and attempt == 0)) and attempt < 4
            signum: int | None = None
            written = self._decisions()
            if kill:
                signum, twice = self.rng.choice(KILLS)
                moment, when = self._moment()
                again = self.rng.uniform(0.0, 0.1) if twice else None
                result = arena_killed(command, signum, when, again=again)
                if again is not None:
                    moment += f", again {1000 * again:.0f} ms later"
                if not result.signalled:
                    signum = None
            else:
                result = arena_run_here(*command)
            self.log.runs += 1
            self._remember()
            what = " ".join(str(c) for c in command[2:]) if self.fmt != "sprt" else "the same match"
            if signum is not None:
                said.append(f"{signal.Signals(signum).name} {moment} of '{what or 'run'}'")
            self._check_exit(result, signum, said)
            if result.exit_code == 0:
                return said
            if signum is not None and result.exit_code in (130, -signal.SIGTERM, -signal.SIGKILL):
                # Interrupted: resume with the same command, or, once the
                # --replay or --keep has written what it decided, plainly.
                if self.fmt != "sprt" and flags and self._decisions() != written and self.rng.random() < 0.5:
                    command = self.subject.command()
                continue
            if result.exit_code == 2 and "changed since" in result.err and flags and command != self.subject.command(*flags):
                command = self.subject.command(*flags)  # the documented refusal, answered as the step does
                said.append(f"refused, answered with {' '.join(flags)}")
                continue
            raise Violation(f"the subject cannot be resumed: exit {result.exit_code}: {_last_line(result.err)}"
                            + (f" (after {', '.join(said)})" if said else ""))
        raise Violation(f"the subject did not finish in 8 runs ({', '.join(said)})")

    def _decisions(self) -> tuple[bytes, ...]:
        """What a --replay (the archive) or a --keep (tournament.json) writes to say it happened."""
        return tuple(_read(self.subject.out / name) for name in ("replaced.jsonl", "tournament.json"))

    def _moment(self) -> tuple[str, Callable[[float], bool]]:
        """When to stop a run: at a random time, or a moment after it first
        changes games.jsonl or replaced.jsonl (an archive being written)."""
        how = self.rng.choice(("time", "time", "games.jsonl", "replaced.jsonl"))
        if how == "time":
            delay = self.rng.uniform(0.0, 1.2 * self.duration)
            return f"at {delay:.2f} s", lambda t: t >= delay
        path, after = self.subject.out / how, self.rng.uniform(0.0, 0.03)
        size, since = _size(path), []

        def when(t: float) -> bool:
            if not since and _size(path) != size:
                since.append(t)
            return bool(since) and t >= since[0] + after
        return f"{1000 * after:.0f} ms after it first changed {how}", when

    def _check_exit(self, result: Result, signum: int | None, said: list[str]) -> None:
        where = f" (after {', '.join(said)})"
        if result.outlived:
            raise Violation(f"processes outlived the arena by {OUTLIVE_S:.0f} s{where}: {'; '.join(result.outlived)[:500]}")
        for bad in ("Traceback", "Exception ignored"):
            if bad in result.err:
                raise Violation(f"'{bad}' on stderr{where}:\n{result.err.strip()[-2000:]}")
        if signum == signal.SIGTERM and result.exit_code == 130:
            last = _last_line(result.err)
            if not last.startswith("error: interrupted"):
                raise Violation(f"SIGTERM ended the run with {last!r}, not one 'error: interrupted' line{where}")
        elif signum == signal.SIGTERM and result.exit_code == -signal.SIGTERM and result.err.strip() \
                and not re.search(r"games played|^records in ", result.err, re.M):
            # Before the arena's handler is set (the interpreter starting) or
            # after its work is done (the interpreter ending), SIGTERM's
            # default action is the right one; in between it is not.
            raise Violation(f"SIGTERM killed the arena outright after it wrote: {_last_line(result.err)}{where}")

    def _remember(self) -> None:
        for record in records_of(self.subject.out):
            self.seen.setdefault(canonical(record), record["game_id"])

    # -- invariants -------------------------------------------------------------------

    def check(self) -> None:
        subject, reference = self.subject, self.reference
        readings = [(subject.out, read_standings(subject.out)), (subject.out / "games.jsonl",
                                                                read_standings(subject.out / "games.jsonl"))]
        if self.fmt != "sprt":
            readings.append((subject.file, read_standings(subject.file)))
        for target, (data, warnings) in readings:
            if "does not schedule" in warnings:
                raise Violation(f"arena standings {target.name} warns of a game outside the schedule: "
                                f"{next(w for w in warnings.splitlines() if 'does not schedule' in w)}")
        readings.append((subject.out.parent / "log-alone", read_standings(log_alone(subject.out))))
        first = readings[0][1][0]
        for target, (data, _) in readings[1:]:
            if without_times(data) != without_times(first):
                raise Violation(f"arena standings reads differently from {target.name} and the directory: "
                                f"{_ranking(data)} against {_ranking(first)}")
        ranked = [bot["name"] for bot in first["bots"]]
        page = read_report(subject.out)
        if report_ranking(page) != ranked:
            raise Violation(f"the report ranks {report_ranking(page)}, arena standings {ranked}")
        kept = {canonical(r) for r in records_of(subject.out)} | {canonical(r) for r in archived_of(subject.out)}
        lost = sorted(game for text, game in self.seen.items() if text not in kept)
        if lost:
            raise Violation(f"records lost (in neither games.jsonl nor replaced.jsonl): {', '.join(lost)}")
        mine, theirs = outcomes(subject.out), outcomes(reference.out)
        if mine != theirs:
            differ = sorted(g for g in mine.keys() | theirs.keys() if mine.get(g) != theirs.get(g))
            raise Violation(f"the results differ from the uninterrupted run's in {len(differ)} games: "
                            + ", ".join(f"{g} ({'missing' if g not in mine else 'extra' if g not in theirs else 'other result'})"
                                        for g in differ[:6]))
        other = read_standings(reference.out)[0]
        if without_times(first) != without_times(other):
            raise Violation(f"the standings differ from the uninterrupted run's: {_ranking(first)} against {_ranking(other)}")


def arena_here(*args: object) -> Result:
    """``arena ARGS`` in this process (a command that reads and starts nothing: faster)."""
    from typer.testing import CliRunner

    from arena.cli import app

    start = time.monotonic()
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise Violation(f"arena {' '.join(map(str, args))} raised {result.exception!r}")
    return Result(result.exit_code, result.stdout, result.stderr, time.monotonic() - start)


def read_standings(target: Path) -> tuple[dict[str, Any], str]:
    """``arena standings TARGET -f json``: the data and the warnings."""
    result = arena_here("standings", target, "-f", "json")
    if result.exit_code != 0:
        raise Violation(f"arena standings {target} exited {result.exit_code}: {_last_line(result.err)}")
    return json.loads(result.out), result.err


def log_alone(out: Path) -> Path:
    """A copy of results directory ``out`` where no index can be made
    (``index.sqlite`` is a FIFO): its readers read ``games.jsonl`` alone."""
    copy = out.parent / "log-alone"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir()
    for name in ("games.jsonl", "replaced.jsonl", "tournament.json"):
        if (out / name).exists():
            shutil.copyfile(out / name, copy / name)
    os.mkfifo(copy / INDEX_FILE)
    return copy


def read_report(directory: Path) -> str:
    page = directory.parent / "report-check.html"
    result = arena_here("report", directory, "-o", page)
    if result.exit_code != 0:
        raise Violation(f"arena report exited {result.exit_code}: {_last_line(result.err)}")
    return page.read_text()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _replayable(line: bytes, versions: dict[str, str]) -> bool:
    """Whether a line of games.jsonl is a record of bots in the tournament,
    played by the ``versions`` they have now."""
    try:
        record = json.loads(line)
        return all(versions.get(name) == record["versions"][color] for color, name in record["players"].items())
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def _ranking(data: dict[str, Any]) -> str:
    return "[" + ", ".join(f"{b['name']} {b.get('score')}" for b in data.get("bots", [])) + f"] of {data.get('total_games')} games"


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(nothing on stderr)"


def run_sequence(seed: int, fmt: str, workdir: Path, steps: int | Sequence[str],
                 avoid: frozenset[str] = frozenset(), stop_first: bool = False) -> Sequence_:
    """``steps`` random events (drawn from ``seed``; none of ``avoid``), or
    the events ``steps`` names, in order, on a league of ``fmt`` in
    ``workdir`` (removed at the end), checked after each (and after the first
    run); stops at the first violation, which the log holds.  The kills, their
    moments and the bots an event picks are drawn from ``seed`` either way;
    ``stop_first``: the subject's first run is stopped whatever the draw
    (so that a short sequence has a kill)."""
    driver = Driver(seed, fmt, workdir, avoid)
    try:
        driver.log.steps.append("first run")
        driver._run_reference(())
        kills = driver._run_subject((), stop=stop_first)
        if kills:
            driver.log.steps[-1] += "; " + ", ".join(kills)
        driver.check()
        for event in [None] * steps if isinstance(steps, int) else steps:
            driver.step(event)
    except Violation as exc:
        driver.log.violations.append(str(exc))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return driver.log
