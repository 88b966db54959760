"""Builders the tests share: the repository, game specs and records, bots,
tournament files and configs, a tournament played round by round without a
bot, results as the readers see them, and the ``arena`` command run
in-process.

A test says only what its case changes (a keyword argument); a helper stays
in a test module only when it is specific to that module's subject."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from typer.testing import CliRunner, Result

import engine
from arena.base.processes import proc_stat
from arena.bot.limits import Limits
from arena.bot.player import BotPlayer
from arena.bot.spec import BotConfig
from arena.formats.game_pairs import game_seed
from arena.formats.progression import next_pairing, read_progress, rounds_schedule
from arena.formats.rounds import Rounds
from arena.formats.stages import Pairing
from arena.game.records import GameRecord, GameSpec, MoveRecord
from arena.results.meta import TournamentMeta
from arena.results.reading import ReadResults, results_of
from arena.results.report import build_report
from arena.results.sprt import SprtConfig
from arena.run.config import TournamentConfig, parse_config
from played_games import played_tournament

#: The repository: bot commands such as ``python -m bots.greedy`` run from here.
ROOT = Path(__file__).resolve().parent.parent
#: The tests' own bots, most of them misbehaving on purpose.
BOTS = ROOT / "tests" / "bots"
#: The example random bot, as a tournament file names it (run from :data:`ROOT`)...
RANDOM_CMD = "python -m bots.random_bot"
#: ... and its script.
RANDOM_SCRIPT = ROOT / "bots" / "random_bot.py"
#: The time control the records built here carry (5+0.1, as :func:`tournament` plays).
TIME_CONTROL = {"initial_ms": 5000, "increment_ms": 100}
#: What the terminal shows of rich's colours and cursor moves.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: A fenced block of a Markdown page: its language and its text.
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
#: A time of day as the report and the tables write it.
STAMP = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC|[+-]\d\d:\d\d)?")


# -- games and bots ------------------------------------------------------------------


def spec(index: int = 1, players: Sequence[str] = ("a", "b"), **fields: Any) -> GameSpec:
    """Game ``index`` of an OXONO schedule (id ``g<index>``, round 1, start
    position 0, seeded by its index) between ``players`` in seat order;
    ``fields``: any other field of :class:`GameSpec`."""
    base = {"game_id": f"g{index}", "game": "oxono", "round": 1, "opening": 0, "seed": index}
    return GameSpec(index=index, players=tuple(players), **{**base, **fields})


def record(index: int = 0, first: str = "a", second: str = "b", winner: str | None = None, *, game: str = "oxono",
           **fields: Any) -> GameRecord:
    """Game ``index`` of ``game`` (id ``g<index>``, seeded by its index) of
    ``first`` (moving first) against ``second``, won by the colour ``winner``
    by the rules (None: a draw); ``fields``: any other field of
    :class:`GameRecord` (``reason``, ``forfeit_by``, ``moves``, ...)."""
    base = {"game_id": f"g{index}", "seed": index, "opening": 0, "time_control": dict(TIME_CONTROL),
            "reason": "exhausted" if winner is None else "alignment", "index": index}
    players = dict(zip(engine.get_game(game).colors, (first, second)))
    return GameRecord(game=game, players=players, winner=winner, **{**base, **fields})


def record_for(spec: GameSpec, winner: str | None = "pink") -> GameRecord:
    """The record of ``spec``, one move long, won by the colour ``winner``:
    the same record at every call."""
    return record(spec.index, *spec.players, winner, game_id=spec.game_id, seed=spec.seed, opening=spec.opening,
                  round=spec.round, moves=[MoveRecord("Xc5 c6", 1.5, {"depth": 2})],
                  versions=dict(zip(("pink", "black"), spec.versions)) or None)


def result(spec: GameSpec, winner: str | None) -> GameRecord:
    """The record of ``spec`` won by the bot ``winner`` by the rules (None: a draw)."""
    played = GameRecord.for_spec(spec, engine.get_game(spec.game).colors, TIME_CONTROL)
    if winner is None:
        played.end_by_rules(None, "exhausted", None)
    else:
        assert winner in spec.players
        played.end_by_rules(spec.players.index(winner), "alignment", None)
    return played


def forfeit(spec: GameSpec, loser: str, reason: str) -> GameRecord:
    """The record of ``spec`` lost by the bot ``loser`` on forfeit ``reason``."""
    played = GameRecord.for_spec(spec, engine.get_game(spec.game).colors, TIME_CONTROL)
    played.end_by_forfeit(spec.players.index(loser), reason, f"{loser}: {reason}")
    return played


class InstantExecutor:
    """An executor that ends each of the first ``limit`` games it is given
    (all of them: None) at once, with the record ``outcome`` makes of its
    spec; the run then ends.  :attr:`given`: the ids of those games."""

    def __init__(self, outcome: Callable[[GameSpec], GameRecord], limit: int | None = None) -> None:
        self.outcome, self.limit = outcome, limit
        self.given: list[str] = []

    def session(self) -> Any:
        from contextlib import nullcontext

        return nullcontext()

    def run(self, specs: Sequence[GameSpec]) -> Iterator[GameRecord]:
        for spec in specs:
            if self.limit is not None and len(self.given) == self.limit:
                return
            self.given.append(spec.game_id)
            yield self.outcome(spec)


def counted_decodes(monkeypatch: Any) -> list[int]:
    """A list that grows by one at each record decoded from a log (through
    its index or not), from now to the end of the test."""
    import arena.results.store as store_module

    decoded: list[int] = []
    real_index, real_log = store_module.record_of, GameRecord.from_bytes
    monkeypatch.setattr(store_module, "record_of", lambda *a: decoded.append(1) or real_index(*a))
    monkeypatch.setattr(GameRecord, "from_bytes", staticmethod(lambda data: decoded.append(1) or real_log(data)))
    return decoded


def replayed(record: GameRecord) -> tuple[engine.Game, Any]:
    """The record's game and the state its opening moves and moves lead to,
    played on the engine from its start position."""
    game = engine.get_game(record.game)
    state = game.new_state(seed=record.seed, opening=record.opening)
    for move in record.opening_moves:
        state = game.apply(state, move)
    for move in record.moves:
        state = game.apply(state, move.move)
    return game, state


def bot_player(name: str, cmd: Sequence[str], game: str = "oxono", *, limits: Limits = Limits(),
               **options: Any) -> BotPlayer:
    """Bot ``name`` started by ``cmd`` from the repository, to play ``game``
    (``options``: those of :class:`BotPlayer`)."""
    return BotPlayer(BotConfig(name=name, cmd=tuple(cmd), options={}, cwd=ROOT, env={}, limits=limits), game, **options)


def bot_cmd(name: str, *args: str) -> list[str]:
    """The command of the test bot ``tests/bots/<name>.py`` with ``args``."""
    return [sys.executable, str(BOTS / f"{name}.py"), *args]


# -- tournaments -------------------------------------------------------------------------

#: The settings of a tournament file that is run, unless a test gives its own.
RUN_SETTINGS: dict[str, object] = {"name": "tiny", "time_control": "10+0.1", "rounds": 1, "concurrency": 2,
                                   "seed": 3, "output": "out"}


def names(n: int) -> list[str]:
    """``s1`` .. ``sn``, the seeding order (``s10`` sorts before ``s2``, so a
    game id's name order is not the seeding's)."""
    return [f"s{i}" for i in range(1, n + 1)]


def tournament_text(bots: Sequence[str], extra: str = "", *, cmds: Mapping[str, str] | None = None,
                    cwd: Path | None = None, bot_keys: str = "", **settings: object) -> str:
    """A tournament file: ``name: t``, OXONO at 5+0.1, and ``settings`` in
    order (a setting given again keeps its line; None leaves it out), then
    the YAML lines ``extra``, then ``bots``, each with its command in
    ``cmds`` or else the random bot's, run from ``cwd`` when given, with the
    flow keys ``bot_keys`` too."""
    settings = {"name": "t", "game": "oxono", "time_control": "5+0.1", **settings}
    head = "".join(f"{key}: {value}\n" for key, value in settings.items() if value is not None)
    more = "".join(f", {keys}" for keys in (f"cwd: {cwd}" if cwd else "", bot_keys) if keys)
    entries = "".join(f"  - {{name: {bot}, cmd: {(cmds or {}).get(bot, RANDOM_CMD)}{more}}}\n" for bot in bots)
    return f"{head}{textwrap.dedent(extra)}bots:\n{entries}"


def tournament(directory: Path, bots: int | Sequence[str] = 3, extra: str = "", *,
               cmds: Mapping[str, str] | None = None, cwd: Path | None = None, **settings: object) -> TournamentConfig:
    """The tournament of :func:`tournament_text` (``bots`` a count: ``s1`` ..
    ``sn``) as read from a file in ``directory``; no bot is started."""
    listed = names(bots) if isinstance(bots, int) else bots
    return parse_config(tournament_text(listed, extra, cmds=cmds, cwd=cwd, **settings), base_dir=directory)


def tournament_file(directory: Path, bots: Sequence[str] = ("alpha", "beta", "gamma"), extra: str = "", *,
                    file: str = "tiny.yaml", cmds: Mapping[str, str] | None = None, cwd: Path | None = ROOT,
                    bot_keys: str = "", **settings: object) -> Path:
    """A tournament file to run, ``directory/file``: :func:`tournament_text`
    with :data:`RUN_SETTINGS` unless ``settings`` change them; the bots run
    from the repository unless ``cwd`` says otherwise (None: the file's folder)."""
    path = directory / file
    text = tournament_text(bots, extra, cmds=cmds, cwd=cwd, bot_keys=bot_keys, **{**RUN_SETTINGS, **settings})
    path.write_text(text)
    return path


def bot_copies(directory: Path, bots: Sequence[str], script: str | None = None) -> dict[str, str]:
    """Each of ``bots`` a script of its own in ``directory``, ``<bot>.py``: a
    copy of the random bot, or the text ``script``; one already there is
    kept (a test may have changed it).  Each bot's command."""
    directory.mkdir(parents=True, exist_ok=True)
    for bot in bots:
        path = directory / f"{bot}.py"
        if path.exists():
            continue
        if script is None:
            shutil.copy(RANDOM_SCRIPT, path)
        else:
            path.write_text(script)
    return {bot: f"python {bot}.py" for bot in bots}


def league_file(directory: Path, bots: Sequence[str], extra: str = "", *, file: str = "league.yaml",
                script: str | None = None, **settings: object) -> Path:
    """``directory/file``: a league of ``bots``, each a script of its own in
    ``directory`` (see :func:`bot_copies`) run from there, seed 11, results
    in ``out``, unless ``settings`` say otherwise."""
    return tournament_file(directory, bots, extra, file=file, cmds=bot_copies(directory, bots, script), cwd=None,
                           **{"name": "league", "rounds": None, "seed": 11, **settings})


def slow_tournament(directory: Path, *, rounds: int = 10, bot_keys: str = "") -> Path:
    """``directory/slow.yaml``: ``rounds`` rounds of two bots slow enough
    (50 ms a move) to be interrupted in the middle, results in ``out``."""
    slow = f"[python, {BOTS / 'slow.py'}, '0.05']"
    return tournament_file(directory, ("a", "b"), file="slow.yaml", cmds={"a": slow, "b": slow}, cwd=None,
                           bot_keys=bot_keys, name=None, time_control="30+0", rounds=rounds, seed=None)


def hostile_tournament(directory: Path, hostile: Sequence[str], *, top: str = "", bot: str = "",
                       tc: str = "10+0.1") -> Path:
    """``directory/t.yaml``: the bot ``hostile`` (a script of :data:`BOTS` and
    its arguments; ``bot``: more YAML lines of its entry) against the random
    bots a, which holds a secret in its environment, and b: 12 OXONO games.
    ``top``: more settings."""
    cmd = json.dumps([sys.executable, str(BOTS / hostile[0]), *hostile[1:]])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "t.yaml"
    path.write_text(
        tournament_text((), top, time_control=tc, concurrency=2, seed=3, output="out", startup_timeout=5)
        + f"  - name: hostile\n    cmd: {cmd}\n{bot}"
        + f"  - {{name: a, cmd: {RANDOM_CMD}, cwd: {ROOT}, env: {{SECRET_API_KEY: SECRET-a-1234}}}}\n"
        + f"  - {{name: b, cmd: {RANDOM_CMD}, cwd: {ROOT}}}\n"
    )
    return path


# -- a tournament played round by round, each game's result decided by the test -----------


def seed(name: str) -> int:
    """The seed of bot ``s<n>``: n."""
    return int(name[1:])


def winner_by(decide: Callable[[GameSpec], str | None]) -> Callable[[GameSpec], GameRecord]:
    """Records whose winner (a bot, None: a draw) ``decide`` names."""
    return lambda spec: result(spec, decide(spec))


#: The better seed (the lower number) wins every game.
better_seed = winner_by(lambda spec: min(spec.players, key=seed))


@dataclass
class Run:
    """A tournament as the runner's loop leaves it."""

    config: TournamentConfig
    seeding: list[str]
    pairings: list[Pairing] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)
    #: Each batch of games the loop asked for, in order.
    batches: list[list[GameSpec]] = field(default_factory=list)

    @property
    def rounds(self) -> Rounds:
        return read_progress(self.config.competition, self.seeding, self.pairings, self.records)

    def advance(self, rounds_paired: int | None = None) -> list[GameSpec]:
        """As ``RunPlan.advance``: the games to play next, pairing a round
        when every game before is recorded; empty once the tournament is
        over (or once ``rounds_paired`` rounds are paired and played)."""
        while True:
            rounds = self.rounds
            done = {r.game_id for r in self.records}
            pending = [s for s in rounds_schedule(self.config.competition, rounds) if s.game_id not in done]
            if pending:
                return pending
            if rounds_paired is not None and len(self.pairings) >= rounds_paired:
                return []
            pairing = next_pairing(self.config.competition, rounds)
            if pairing is None:
                return []
            # Stored in tournament.json and read back, as the runner does.
            stored = json.loads(json.dumps([p.to_json() for p in [*self.pairings, pairing]]))
            self.pairings = msgspec.convert(stored, list[Pairing])

    def play(self, decide: Callable[[GameSpec], GameRecord], until_round: int | None = None) -> Run:
        """Play with ``decide`` making each game's record, to the end (or
        until round ``until_round`` is played, the next one not yet paired)."""
        for _ in range(10_000):
            pending = self.advance(until_round)
            if not pending:
                return self
            self.batches.append(pending)
            self.records += [decide(spec) for spec in pending]
        raise AssertionError("the tournament never ends")


def read_run(run: Run, directory: Path = Path(".")) -> ReadResults:
    """``run`` as every reading command reads it, its ``tournament.json`` as the runner writes it."""
    from arena.run.results_dir import tournament_meta

    return results_of(directory, tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings), run.records)


def swiss_in_round_3(directory: Path = Path(".")) -> tuple[ReadResults, Run]:
    """Five bots, three Swiss rounds with a bye a round (a won pair), ranked
    by points; the better seed wins every game but s5's of round 2, which it
    forfeits (timeout); round 3 is paired, its first pairing played, the
    other not yet.  Read from ``directory``."""
    config = tournament(directory, 5, "format: swiss\nrounds: 3\nbye: win\nranking: points\n")

    def decide(spec: GameSpec) -> GameRecord:
        return forfeit(spec, "s5", "timeout") if "s5" in spec.players and spec.round == 2 else better_seed(spec)

    run = start(config).play(decide, until_round=2)
    third = run.advance()
    run.records += [better_seed(s) for s in third if set(s.players) == set(third[0].players)]
    return read_run(run, directory), run


def start(config: TournamentConfig, seeding: Sequence[str] | None = None) -> Run:
    """The tournament ``config`` before its first round, seeded in the file's order unless ``seeding`` says."""
    return Run(config, list(seeding) if seeding is not None else [b.name for b in config.bots])


# -- a cup played in-process, a bot's name markup ------------------------------------------

#: A bot name that would be markup if the report did not show it as text.
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
#: The name it plays under (a tournament file refuses the hostile one), renamed after:
#: both sort before the other names, so the game ids keep their order of names.
STAND_IN = "0evil"
#: A knockout of 5 (three byes in the first round) with one game pair a match
#: and up to two tie-break pairs: dan and eve tie their pair, eve wins the
#: next; bob and the hostile bot stay tied through the tie-breaks, bob goes
#: through as the better seed; bob wins the final.
KNOCKOUT = ("format: knockout\ntiebreak_pairs: 2", ["ann", "bob", STAND_IN, "dan", "eve"], {
    frozenset({"dan", "eve"}): ["dan", "eve", "eve", "eve"],
    frozenset({"bob", STAND_IN}): ["bob", STAND_IN] * 3,
    frozenset({"ann", "bob"}): ["bob", "bob"],
})


def played_cup(stages: str, bots: list[str], winners: dict[frozenset[str], list[str]]
               ) -> tuple[list[GameRecord], dict[str, Any]]:
    """The records and ``tournament.json`` of a tournament of the greedy
    ``bots`` under the settings ``stages``, played in-process with
    ``winners`` (see :func:`played_tournament`), :data:`STAND_IN` renamed
    :data:`HOSTILE_NAME` after."""
    text = tournament_text(bots, stages + "\n", cmds=dict.fromkeys(bots, "python -m bots.greedy"), name="cup",
                           time_control="move 0.2")
    records, meta = played_tournament(text, winners)
    return [_renamed(r, meta["seed"]) for r in records], _renamed_meta(meta)


def _renamed(record: GameRecord, tournament_seed: int) -> GameRecord:
    # A game's seed follows from its id: the renamed game is the one the renamed schedule holds.
    game_id = record.game_id.replace(STAND_IN, HOSTILE_NAME)
    return dataclasses.replace(record, game_id=game_id, seed=game_seed(tournament_seed, game_id),
                               players={c: HOSTILE_NAME if n == STAND_IN else n for c, n in record.players.items()})


def _renamed_meta(meta: dict[str, Any]) -> dict[str, Any]:
    name = lambda n: HOSTILE_NAME if n == STAND_IN else n  # noqa: E731
    return {**meta, "bots": [{**b, "name": name(b["name"])} for b in meta["bots"]],
            "seeding": [name(n) for n in meta["seeding"]],
            "pairings": [{**p, "pairs": [[name(a), None if b is None else name(b)] for a, b in p["pairs"]],
                          "byes": [name(n) for n in p["byes"]]} for p in meta["pairings"]]}


def large_cup(bots: int, swiss_rounds: int) -> tuple[list[GameRecord], dict[str, Any]]:
    """The records and ``tournament.json`` of a field of ``bots`` teams with
    names of different lengths: a Swiss of ``swiss_rounds`` rounds, then a
    knockout of its top 8, played in-process (see :func:`played_tournament`)."""
    teams = [f"team-{i:03d}-{'abcdefghij'[i % 10]}{'x' * (i % 7)}" for i in range(1, bots + 1)]
    stages = f"stages:\n  - {{format: swiss, rounds: {swiss_rounds}}}\n  - {{format: knockout, top: 8}}\n"
    return played_tournament(tournament_text(teams, stages, cmds=dict.fromkeys(teams, "python -m bots.greedy"),
                                             name=f"cup of {bots}", time_control="move 0.2"))


# -- results as the readers see them ----------------------------------------------------


#: The shapes of :func:`forged_meta`.
FORGED_SHAPES = ("round-robin", "gauntlet", "swiss", "stages")


def forged_meta(directory: Path, bots: int, shape: str) -> Path:
    """A results directory with no game whose ``tournament.json`` names
    ``bots`` bots, as a forger writes one: a ``round-robin`` or ``gauntlet``
    (a schedule of n² or n games), a ``swiss`` with its first round paired,
    or ``stages`` (that Swiss, then a knockout of its best 8)."""
    names = [f"bot{i:05d}" for i in range(bots)]
    meta: dict[str, Any] = {"name": "forged", "game": "oxono", "time_control": TIME_CONTROL, "seed": 1,
                            "format": shape, "game_ids": "names", "bots": [{"name": n, "options": {}} for n in names]}
    if shape in ("swiss", "stages"):
        first = {"round": 1, "stage": 1, "pairs": [names[i:i + 2] for i in range(0, bots - 1, 2)], "byes": []}
        meta |= {"stages": [{"format": "swiss", "rounds": 3}], "seeding": names, "pairings": [first]}
    if shape == "stages":
        meta["stages"].append({"format": "knockout", "top": 8})
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tournament.json").write_text(json.dumps(meta))
    (directory / "games.jsonl").write_text("")
    return directory


def meta_of(meta: dict[str, Any] | None) -> TournamentMeta | None:
    """The typed record of a ``tournament.json`` given as a dict (None for none or ``{}``)."""
    return TournamentMeta.from_json(meta) if meta else None


def results(records: Sequence[GameRecord], meta: dict[str, Any] | None = None, *, sprt: SprtConfig | None = None,
            directory: Path = Path(".")) -> ReadResults:
    """``records`` under ``meta`` as every reading command reads them."""
    return results_of(directory, meta_of(meta), records, sprt=sprt)


def report_page(records: Sequence[GameRecord], meta: dict[str, Any] | None = None, *, sprt: SprtConfig | None = None,
                **options: Any) -> str:
    """The report page of ``records`` under ``meta`` (``options``: those of :func:`build_report`)."""
    return build_report(results(records, meta, sprt=sprt), **options)


def records(directory: Path, file: str = "games.jsonl") -> list[dict[str, Any]]:
    """The lines of a results directory's ``games.jsonl`` (or ``file``), as JSON."""
    return [json.loads(line) for line in (directory / file).read_text().splitlines()]


def fenced(text: str) -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the Markdown ``text``, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def finishes_within(seconds: float, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``'s result or exception, failing if it does not end in
    ``seconds`` (against a regression to a file that costs an hour)."""
    outcome: list = []

    def call() -> None:
        try:
            outcome.append(function(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    return outcome[0]


def copy_results(source: Path, target: Path) -> Path:
    """A copy of the results directory ``source`` at ``target``, without its index
    (derived from the log, made again on the first read): a reader of ``source`` that
    closes the index meanwhile takes its ``-wal`` file away in the middle of the copy."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("index.sqlite*"))
    return target


@contextmanager
def served(directory: Path, host: str = "127.0.0.1", bot: str | None = None) -> Iterator[str]:
    """``arena serve directory`` in a thread (on any free port), for the ``with`` block: its address, with the token;
    ``bot``: that team's page (``--bot``)."""
    from arena.live.server import serve
    from arena.live.state import LiveState

    ready: list[str] = []
    stop = threading.Event()
    server = threading.Thread(target=serve, args=(LiveState(directory, bot), host, 0),
                              kwargs={"on_ready": ready.append, "stop": stop})
    server.start()
    try:
        yield until(lambda: ready, 10, "the server")[0]
    finally:
        stop.set()
        server.join(10)


# -- the arena command ---------------------------------------------------------------------


def until(check: Callable[[], Any], seconds: float = 5.0, what: str = "", every: float = 0.01) -> Any:
    """``check()``'s first true value, polled every ``every`` seconds; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s: {what}" if what else f"not within {seconds} s")


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie no one reaped yet has)."""
    stat = proc_stat(pid)
    return stat is not None and stat[0] != "Z"


def arena(*args: object) -> Result:
    """Run ``arena ARGS`` in-process; never an unexpected exception (a
    traceback).  ``out`` and ``err``: its stdout and stderr without colours."""
    from arena.cli import app  # a third of a second to import: paid only by the tests that run the command

    ran = CliRunner().invoke(app, [str(a) for a in args])
    assert ran.exception is None or isinstance(ran.exception, SystemExit), (
        f"arena {' '.join(map(str, args))} raised {ran.exception!r}"
    )
    ran.out = ANSI.sub("", ran.stdout)
    ran.err = ANSI.sub("", ran.stderr)
    assert "Traceback" not in ran.out + ran.err
    return ran


def assert_one_line_error(ran: Result, *needles: str) -> str:
    """Exit code 2, nothing on stdout, exactly one line on stderr: ``error: ...`` naming every needle."""
    assert ran.exit_code == 2, ran.out + ran.err
    assert ran.out == ""
    lines = ran.err.splitlines()
    assert len(lines) == 1, ran.err
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def played(ran: Result) -> int:
    """How many games ``arena run`` says it played."""
    match = re.search(r"^(\d+) games played, (\d+) resumed", ran.err, re.M)
    assert match, ran.err
    return int(match[1])


def readings(target: Path, game_id: str) -> tuple[str, str, str]:
    """Standings (JSON), the report (times aside) and one game's replay, read from ``target``."""
    standings = arena("standings", target, "-f", "json")
    assert standings.exit_code == 0, standings.err
    report = arena("report", target, "-o", target.parent / f"report-{target.name}.html")
    assert report.exit_code == 0, report.err
    page = STAMP.sub("", (target.parent / f"report-{target.name}.html").read_text())
    # The link to the logs is relative to where the page is, so it differs from page to page.
    page = re.sub(r'"logs_href":"[^"]*"', "", page)
    show = arena("show", target, game_id, "--final")
    assert show.exit_code == 0, show.err
    return standings.out, page, show.out


# -- numbers computed another way, for the statistics' tests ---------------------------


def bisect(f: Callable[[float], float], low: float, high: float, steps: int = 300) -> float:
    """A root of ``f`` between ``low`` and ``high`` by bisection: slow and sure,
    independent of the arena's own solvers.  It stops once no float lies
    between the two ends: the steps left would change neither (f is called
    once a step, not twice: some tests bisect thousands of times)."""
    low_positive = f(low) > 0
    for _ in range(steps):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if (f(mid) > 0) == low_positive:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def frequencies(counts: Sequence[float]) -> tuple[list[float], float]:
    """Observed frequencies of ``counts`` (an empty cell counted as 0.001, so
    every log is finite) and their total."""
    cells = [count if count else 1e-3 for count in counts]
    return [count / sum(cells) for count in cells], sum(cells)
