"""Runs game specs on a Ray cluster: the same games as the local executor,
on actors spread over many machines.

Each actor is one Ray worker process holding a :class:`~arena.run.pool.BotPool`,
exactly as a local worker does: its bots are started on first use and kept
from game to game.  The driver (the process running the tournament) feeds
each actor one spec at a time and hands back the records; it alone writes
results.  An actor that dies (its node lost, killed from outside) loses only
the game it was playing, which goes back to the front of the queue and is
played on another actor; a record is handed back once per game even if the
game was played twice.

Under an SPRT (specs read lazily, see
:class:`~arena.run.spec_queue.StoppableSpecs`) game pairs are the unit: an
actor is given a whole pair, and one more queued behind it so that it never
waits for the driver; no pair goes out more than two an actor past the
first one not yet complete
(:attr:`~arena.run.spec_queue.SpecQueue.window`), so an actor that stalls on
a pair the verdict needs holds the others back until its deadline rather
than letting them play on past the verdict; once the test is decided the
actors drop the games queued there that have not started.  The verdict does
not depend on which actor finished first (see :mod:`arena.results.sprt`).

The games in progress reach ``arena serve`` as messages, not files: a node
need not see the results directory.  Each actor holds its game
(:class:`~arena.results.live_feed.LiveFeed` with no directory), and a thread
of the driver asks every actor for it each :data:`RELAY_EVERY_S` and writes
the live files on the driver's machine (:class:`_LiveRelay`).

``ray`` is an optional dependency, imported only when this executor is made.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Any

from arena.base import safe_files
from arena.bot.process import ArenaWriteError
from arena.bot.reaper import become_subreaper, kill_adopted, kill_all
from arena.bot.spec import BotConfig
from arena.base.stop_signals import check
from arena.game.records import GameRecord, GameSpec
from arena.results.live_feed import LiveFeed
from arena.results.meta import MetaCluster, MetaNode
from arena.run.config import ConfigError, TournamentConfig
from arena.run.executor import game_deadline_s
from arena.run.pool import PREFLIGHT_TAG, BotPool, die_killing_bots, here  # (die_killing_bots: a local worker's SIGTERM handler too)
from arena.run.preflight import StartupProblem, preflight
from arena.run.ray_head import HeadWatch, check_head
from arena.run.node_conditions import (
    BENCHMARK_S, SLOW, Conditions, benchmark, common_niceness, report_here, scaled, set_niceness, time_scale,
)
from arena.run.ray_nodes import NodeChecks
from arena.run.spec_queue import HeadLost, SpecQueue, WorkerDied

__all__ = [
    "RayExecutor", "GameActor", "Placement", "INSTALL_HINT", "LOCAL_RAY", "ray_address", "describe_ray_address",
    "on_this_node",
]

_log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'totem-arena[ray]' (from a clone: pip install -e '.[ray]')"
#: A game whose actor died this many times is not tried again: the game
#: itself is likely what kills it (a bot eating the node's memory, say).
MAX_ATTEMPTS = 3
#: From a sequence of specs, games queued on an actor beyond the one it plays:
#: an instant game takes about as long as a call to an actor and back.
QUEUED_AHEAD = 1
#: From a sequence of specs, quick games go to an actor in batches lasting
#: about this long (at most ``MAX_BATCH`` games): a call to an actor costs
#: more CPU, in Ray's machinery on the driver and the actor, than an instant
#: game.
BATCH_S = 0.25
MAX_BATCH = 64
#: The records of a batch stream back as their games end, those of games
#: shorter than this together: each message through Ray wakes several
#: threads of the actor and the driver, which cost instant games half their
#: speed on one machine.  An actor that dies loses the records it holds (at
#: most this long of play), whose games are played again.
HOLD_S = 0.05
#: The line an actor sends back, in place of a record, for a game it dropped
#: unplayed (the test was decided); a record's line starts with ``{``.
DROPPED = b"-"
#: ``ray.init`` options of a Ray instance started on this machine for a run.
#: Ray starts its workers, hence actors and their bots, at niceness 15: any
#: other program on the machine would then take the cores from the bots
#: (which lose on time), unlike local workers, which run at the user's
#: priority.  Nobody looks at a dashboard: seconds saved at start.
LOCAL_RAY: dict[str, Any] = {"include_dashboard": False, "_system_config": {"worker_niceness": 0}}
#: How long the nodes get to report their niceness and speed before the first
#: game; a node silent so long is left out (its actors measure it themselves).
SURVEY_TIMEOUT_S = 30.0
#: How long the run waits for a first actor to start before it gives up.
START_TIMEOUT_S = 120.0
#: How long actors get to quit their bots at the end of a run.
CLOSE_TIMEOUT_S = 15.0
#: How often a run whose number of actors follows the cluster's CPUs asks
#: for them: a node that joins gets actors within about this long, plus an
#: actor's start.
GROW_EVERY_S = 2.0
#: How often the driver asks the actors for their games in progress: the
#: live view reads the files every 0.25 s too, so a move is on the page
#: within about half a second plus a message's way.
RELAY_EVERY_S = 0.25


@dataclass(frozen=True)
class Placement:
    """Where an actor runs, as it reports it: the Ray node's id, its host
    name, the actor's process id; and the bots that did not start there in
    its pre-flight (a program missing on that node, a file left out of the
    shipped ``working_dir``), whose games it is not given."""

    node_id: str
    node: str
    pid: int
    logs_dir: str | None
    problems: tuple[StartupProblem, ...] = ()
    #: The niceness its bots start at.
    nice: int = 0
    #: What its games' clocks are multiplied by (``ray.time_scaling: speed``), or None.
    time_scale: float | None = None

    @property
    def where(self) -> str:
        """The node in a line: its host and the start of its Ray node id
        (two nodes may share a host name)."""
        return f"node {self.node} ({self.node_id[:8]})"


class GameActor:
    """A Ray actor: one bot pool on one node, playing the specs the driver sends.

    Made a Ray actor class by :class:`RayExecutor` (so that this module
    imports without Ray).  Games run on the actor's default thread, which
    lives as long as the actor, so the parent-death signal of the bots it
    starts fires when the actor process dies; ``stop_now`` and ``live`` run on
    a second thread, so they are heard while a game is in progress."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: str | None,
        scratch_dir: str | None,
        number: int,
        driver_python: str,
        shipped_from: str | None,
        conditions: Conditions,
    ) -> None:
        # As in a local worker: orphans of the bots come back to this process
        # to be killed, and a SIGTERM (Ray stopping the worker, or a person)
        # kills the bots' process trees before the actor exits.
        become_subreaper()
        signal.signal(signal.SIGTERM, die_killing_bots)
        # A SIGKILL runs no handler: the guardian ends what the bots forked.
        # It holds the read end of a pipe only this process can write to, and
        # stays in this session (the subreaper kills children in other
        # sessions as a bot's leftovers) but not in this process group (Ray
        # kills that when the actor dies).
        read_end, self._lifeline = os.pipe()
        subprocess.Popen([sys.executable, "-m", "arena.bot.guardian"], stdin=read_end, process_group=0)
        os.close(read_end)
        self.config = on_this_node(config, driver_python, Path(shipped_from) if shipped_from else None, Path.cwd())
        tag = _slot(number)
        self.logs_dir = _writable(Path(logs_dir), self.config.name, "logs") if logs_dir else None
        scratch = _writable(Path(scratch_dir), self.config.name, "scratch") if scratch_dir else None
        import ray  # present: this runs on a Ray worker

        node_id = ray.get_runtime_context().get_node_id()
        # Before any bot starts: they inherit it.
        self.nice = set_niceness(conditions.nice)
        speed, scale = conditions.speed(node_id, self.config.competition.game)
        self.pool = BotPool(scaled(self.config, scale) if scale is not None else self.config, self.logs_dir, tag=tag,
                            scratch_dir=scratch, feed=LiveFeed(None, tag), time_scale=scale,
                            # A node's copy of a bot differs by design (its own build, a working_dir
                            # shipped without what .gitignore lists): its fingerprint is not the driver's.
                            check_versions=False,
                            played_on=here(node_id=node_id, actor=number, **({} if speed is None else {"speed": speed})))
        self.stopping = False
        self.dropping = False

    def placement(self, names: list[str], home: str) -> Placement:
        """Where this actor runs, once it has started each of the bots
        ``names`` on this node and stopped it again (the driver's
        pre-flight, here: the node may lack a program, a library or a file
        the driver's machine has).  A remote bot is reached through the
        listener on the driver's node, ``home``: it plays there only."""
        import ray  # present: this runs on a Ray worker

        remote = set(self.config.remote_bots)
        problems = preflight(self.config, [name for name in names if name not in remote], self.logs_dir,
                             tag=f"{PREFLIGHT_TAG}-{self.pool.tag}")
        logs = str(self.logs_dir) if self.logs_dir is not None else None
        node_id = ray.get_runtime_context().get_node_id()
        if node_id != home:
            problems += [StartupProblem(name, "a remote bot plays on the driver's node, where the run listens for it")
                         for name in names if name in remote]
        return Placement(node_id=node_id, node=socket.gethostname(), pid=os.getpid(), logs_dir=logs,
                         problems=tuple(problems), nice=self.nice, time_scale=self.pool.time_scale)

    def play(self, specs: list[GameSpec]) -> Iterator[list[bytes]]:
        """Play the specs in turn (called as a Ray streaming generator),
        handing back the records of the games played since the last answer
        once ``HOLD_S`` has passed since then (so at once after a longer
        game), and at the end.  A record is the line the store writes,
        encoded once, here, as a local worker does: plain JSON crosses to the
        driver whatever a bot put in its ``info``, where pickling deep nesting
        would fail."""
        held: list[bytes] = []
        since = time.monotonic()
        for spec in specs:
            if self.stopping:
                return
            if self.dropping:
                held.append(DROPPED + spec.game_id.encode())
                continue
            held.append(self.pool.play(spec).to_line())
            if time.monotonic() - since >= HOLD_S:
                yield held
                held, since = [], time.monotonic()
        if held:
            yield held

    def live(self) -> bytes | None:
        """The game in progress, as its live file (None between games)."""
        assert self.pool.feed is not None
        return self.pool.feed.snapshot()

    def close(self) -> None:
        """Quit the bots gently (the end of a run)."""
        self.pool.close()
        kill_adopted()

    def drop_queued(self) -> None:
        """Play none of the games queued here that have not started (the test
        is decided): each is sent back as dropped.  The game in play finishes."""
        self.dropping = True

    def stop_now(self) -> None:
        """Kill every bot of this actor at once and play no more (an interrupted run)."""
        self.stopping = True
        kill_all()
        kill_adopted()


def on_this_node(config: TournamentConfig, driver_python: str, shipped_from: Path | None, shipped_to: Path) -> TournamentConfig:
    """The tournament as an actor must run it on its node: ``python`` bots use
    this node's interpreter (the driver's path may not exist here), and a bot
    whose directory or program lies in the shipped ``working_dir`` runs from
    the copy Ray unpacked (the actor's working directory)."""

    def moved(path: Path) -> Path:
        if shipped_from is not None and path.is_relative_to(shipped_from):
            return shipped_to / path.relative_to(shipped_from)
        return path

    def bot(entry: BotConfig) -> BotConfig:
        if entry.remote is not None:  # no program here: it runs on its author's machine
            return entry
        program, *args = entry.cmd
        if program == driver_python:
            program = sys.executable
        elif os.path.isabs(program):
            program = str(moved(Path(program)))
        return replace(entry, cmd=(program, *args), cwd=moved(entry.cwd))

    return replace(config, bots=tuple(bot(entry) for entry in config.bots))


def _writable(directory: Path, name: str, kind: str) -> Path:
    """A directory of the results (``logs``, ``scratch``) when this node can
    write it (one machine, or a shared file system), else one in this node's
    temporary directory."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if os.access(directory, os.W_OK):
            return directory
    except OSError:
        pass
    local = Path(tempfile.gettempdir()) / "totem-arena" / name / kind
    local.mkdir(parents=True, exist_ok=True)
    return local


def import_ray(config: TournamentConfig) -> Any:
    """The ``ray`` module, or a one-line :class:`ConfigError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"the ray executor needs the Python package 'ray': {INSTALL_HINT}",
                          file=str(config.path or ""), key="executor") from None
    return ray


def ray_address(config: TournamentConfig) -> str:
    """The address ``ray.init`` gets.  None in the file means the cluster
    RAY_ADDRESS names (inside a Ray job, say), else ``local``: a Ray instance
    of our own on this machine, not some cluster `ray start`ed here."""
    return config.ray.address or os.environ.get("RAY_ADDRESS") or "local"


def _init_within(ray: Any, address: str, options: dict[str, Any], timeout: float) -> None:
    """``ray.init``, given ``timeout`` seconds: Ray's own waits (a wrong
    port, a head that does not answer) last minutes, in C++ where no signal
    reaches them, so the connection is made in a thread of its own while
    this one waits (and takes Ctrl-C).  Ray's core writes its warnings to
    the process's stderr (file descriptor 2), dozens of lines while it
    retries: they go to a file meanwhile, and for good when the time runs
    out (the thread still retries), the arena's own lines to the terminal."""
    outcome: list[BaseException] = []
    done = threading.Event()

    def connect() -> None:
        try:
            ray.init(address=address, **options)
        except BaseException as exc:  # noqa: BLE001 — handed to the waiting thread
            outcome.append(exc)
        finally:
            done.set()

    fd, name = tempfile.mkstemp(prefix="arena-ray-connect-", suffix=".log")
    terminal = os.dup(2)
    timed_out = False
    try:
        sys.stderr.flush()
        os.dup2(fd, 2)
        threading.Thread(target=connect, name="ray-connect", daemon=True).start()
        deadline = time.monotonic() + timeout
        while not done.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
            check()  # (under a run's flag a stop raises nothing by itself)
            if time.monotonic() >= deadline:
                timed_out = True
                break
    finally:  # (Ctrl-C included: the arena's line goes to the terminal)
        if timed_out:
            sys.stderr = open(os.dup(terminal), "w", encoding=sys.stderr.encoding or "utf-8", errors="replace")
        else:
            os.dup2(terminal, 2)
        os.close(terminal)
        said = os.fstat(fd).st_size > 0
        os.close(fd)
        if not (timed_out or outcome and said):
            os.unlink(name)
    if timed_out:
        raise TimeoutError(f"no answer within {timeout:g} s (ray.connect_timeout); Ray's own messages go to {name}")
    if outcome:
        first = (str(outcome[0]).strip().splitlines() or [type(outcome[0]).__name__])[0]
        raise ConnectionError(f"{first}; Ray's own messages are in {name}" if said else first) from outcome[0]


#: Why an actor was lost when Ray says it died (its own words, a paragraph, go to its log).
ACTOR_DIED = "its process or node died"

#: Where a run's Ray writes its own messages (in its results' ``logs/``).
RAY_LOG = "ray.log"


@contextmanager
def ray_output_to(logs: Path | None) -> Iterator[None]:
    """While connected: what Ray's core writes to the process's stderr
    (file descriptor 2: a raylet's dump, reconnection warnings, dozens of
    lines an event) goes to :data:`RAY_LOG` in the results' ``logs``
    folder (never through a link; a temporary file when None), and the
    arena's own lines (``sys.stderr``) to the terminal still.  Only where
    ``sys.stderr`` is descriptor 2 (a caller that captures it keeps it)."""
    try:
        ours = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        ours = False
    temporary = None
    try:
        if not ours:
            raise OSError("not this process's stderr")
        if logs is None:
            fd, temporary = tempfile.mkstemp(prefix="arena-ray-", suffix=".log")
        else:
            fd = safe_files.open_file(logs.parent, PurePath(logs.name, RAY_LOG), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                                      0o600)
    except OSError:  # (a full disk, a link in its place: Ray's lines go where they went)
        yield
        return
    sys.stderr.flush()
    terminal, saved = os.dup(2), sys.stderr
    sys.stderr = open(os.dup(terminal), "w", encoding=saved.encoding or "utf-8", errors="replace")
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, 2)
        os.close(terminal)
        sys.stderr.close()
        sys.stderr = saved
        if temporary is not None and os.stat(temporary).st_size == 0:
            os.unlink(temporary)


def describe_ray_address(address: str) -> str:
    return "a Ray instance started on this machine" if address == "local" else f"the Ray cluster at {address!r}"


class RayExecutor:
    """Plays specs on Ray actors, one game at a time per actor.

    Uses the Ray connection of this process if there is one (``ray.init``
    called before); otherwise connects to ``config.ray.address`` (else to
    ``RAY_ADDRESS``, else starts a Ray instance on this machine), and
    disconnects at the end.  ``concurrency`` (else ``config.ray.actors``,
    else the cluster's CPUs divided by ``num_cpus``) is the number of actors.
    Logs and scratch directories are as locally where a node can write them
    (see :func:`_writable`)."""

    def __init__(
        self,
        config: TournamentConfig,
        logs_dir: Path | None = None,
        concurrency: int | None = None,
        *,
        scratch_dir: Path | None = None,
        game_deadline: float | None = None,
        live_dir: Path | None = None,
    ) -> None:
        self.ray = import_ray(config)
        self.config = config
        self.logs_dir = logs_dir
        self.live_dir = live_dir
        self.scratch_dir = scratch_dir
        self.concurrency = concurrency
        #: Seconds an actor may stay silent on one game before it is killed.
        self.game_deadline = game_deadline if game_deadline is not None else game_deadline_s(config)
        #: Where each actor of the current run was placed, by actor number
        #: (those lost since included).
        self.placements: dict[int, Placement] = {}
        #: Actors lost during the current run.
        self.lost = 0
        #: Games queued on actors and dropped unplayed when the test was decided (the current run).
        self.dropped = 0
        #: The cluster as the last :meth:`session` found it on connecting.
        self.cluster: MetaCluster | None = None
        #: The cluster's head stopped answering during the last run.
        self.head_gone = False
        #: The bots' niceness, and calibrated the nodes' speeds, as found on
        #: connecting (:meth:`_survey`); None while not connected.
        self.conditions: Conditions | None = None
        self._deadline_given = game_deadline is not None
        self._actors: _Actors | None = None

    # -- connecting ----------------------------------------------------------

    def _where(self, key: str) -> dict[str, str]:
        return {"file": str(self.config.path or ""), "key": key}

    def _connect(self) -> bool:
        """Connect to Ray unless this process already is; True if connected here."""
        ray = self.ray
        shipped = self.config.ray.working_dir
        if ray.is_initialized():
            if shipped is not None and "working_dir" not in ray.get_runtime_context().runtime_env:
                raise ConfigError(
                    "this process is connected to Ray already, without a working_dir: give it to ray.init",
                    **self._where("ray.working_dir"),
                )
            return False
        address = ray_address(self.config)
        options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
        if shipped is not None:
            # Ray ships a local directory only for a whole job, not per actor.
            options["runtime_env"] = {"working_dir": str(shipped)}
        if address == "local":
            options.update(LOCAL_RAY)
        try:
            # Ray started on this machine has no wrong address to wait on; from another thread its GCS was not reached
            if address == "local":
                ray.init(address=address, **options)
            else:
                check_head(address)
                _init_within(ray, address, options, self.config.ray.connect_timeout)
        except Exception as exc:  # ConnectionError, AuthenticationError, ValueError, TimeoutError...
            where = describe_ray_address(address)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            hint = ""
            if "token" in first.lower():
                hint = " (give the cluster's token in RAY_AUTH_TOKEN, or run `ray get-auth-token` on its head node)"
            raise ConfigError(f"cannot connect to {where}: {first}{hint}", **self._where("ray.address")) from None
        return True

    @contextmanager
    def session(self) -> Iterator[None]:
        """Stay connected to Ray across runs (the rounds of a Swiss, a
        knockout's tie-breaks): connect now unless this process is, and
        disconnect at the end if connected here; each run within reuses it."""
        connected_here = self._connect()
        with ray_output_to(self.logs_dir) if connected_here else nullcontext():
            try:
                self.conditions = self._survey()
                self.cluster = self._cluster()
                yield
            finally:
                if connected_here:  # (its goodbyes to the log too)
                    self._disconnect()

    def _cluster(self) -> MetaCluster:
        """The cluster's live nodes and their CPUs, and this driver's Python
        and Ray (Ray refuses a node or driver with other versions)."""
        conditions = self.conditions or Conditions(0)
        nodes = tuple(
            MetaNode(str(node.get("NodeManagerHostname", "")), str(node.get("NodeID", "")),
                     float(node.get("Resources", {}).get("CPU", 0)), conditions.measured(str(node.get("NodeID", ""))))
            for node in self.ray.nodes() if node.get("Alive")
        )
        return MetaCluster(platform.python_version(), str(self.ray.__version__), nodes)

    def _survey(self) -> Conditions:
        """Before the first game, a task on each live node reports its Ray
        workers' niceness and, calibrating, plays the benchmark (the driver
        plays it before and after, here: on one machine they would share its cores).
        Says, in a line, what differs: a node that keeps the bots above the
        driver's niceness, a node slower than :data:`SLOW` of the driver's
        machine (when the clock is not scaled for it)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self.ray
        settings = self.config.ray
        driver_nice = os.getpriority(os.PRIO_PROCESS, 0)
        game = self.config.competition.game if settings.calibrate else None
        reference = benchmark(game, BENCHMARK_S / 2) if game is not None else None
        hosts = {str(node["NodeID"]): str(node.get("NodeManagerHostname", "")) for node in ray.nodes()
                 if node.get("Alive")}
        task = ray.remote(num_cpus=0, max_retries=0)(report_here)
        calls = {task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
            driver_nice, game): node for node in hosts}
        ready, late = ray.wait(list(calls), num_returns=len(calls), timeout=SURVEY_TIMEOUT_S)
        for call in late:  # (its node's actors measure it themselves: the task would take a core from a game)
            with contextlib.suppress(Exception):
                ray.cancel(call, force=True)
        if game is not None and reference is not None:
            reference = max(reference, benchmark(game, BENCHMARK_S / 2))
        reports = {}
        for call in ready:
            try:
                reports[calls[call]] = ray.get(call)
            except ray.exceptions.RayError:  # the node died meanwhile: its actors measure it themselves
                pass
        nice = common_niceness(driver_nice, [report.floor for report in reports.values()])
        where = {node: f"node {hosts[node]} ({node[:8]})" for node in reports}
        if nice != driver_nice:
            above = [f"{where[node]} at {report.nice}" for node, report in reports.items() if report.floor > driver_nice]
            _log.warning(f"bots run at niceness {nice} on every node, not {driver_nice} as this one's: the Ray workers "
                         f"of {' and '.join(above)} cannot go lower; for {driver_nice}, start Ray there with "
                         f"`RAY_worker_niceness={driver_nice} ray start ...`")
        speeds = {node: report.speed for node, report in reports.items() if report.speed is not None}
        conditions = Conditions(nice, reference, speeds, settings.time_scaling == "speed")
        for node in speeds:
            speed = conditions.measured(node)
            if speed is not None and speed < SLOW and not conditions.scaling:
                _log.warning(f"{where[node]} runs the benchmark at {speed:.2f} the speed of this machine: its bots "
                             "do less in the same time (ray.time_scaling: speed gives its games a longer clock)")
        if conditions.scaling and speeds:
            self.allow_for(max(time_scale(reference, plies) for plies in speeds.values()))
        return conditions

    def allow_for(self, scale: float) -> None:
        """A game's deadline long enough for a clock ``scale`` times the
        file's (never shorter than it was; a deadline given is kept)."""
        if not self._deadline_given:
            self.game_deadline = max(self.game_deadline, game_deadline_s(scaled(self.config, max(1.0, scale))))

    def _actor_count(self) -> int:
        settings = self.config.ray
        nodes = [node for node in self.ray.nodes() if node.get("Alive")]
        biggest = max((node.get("Resources", {}).get("CPU", 0) for node in nodes), default=0)
        if settings.num_cpus > biggest:
            raise ConfigError(
                f"each actor asks for {settings.num_cpus:g} CPUs but no node of the cluster has more than {biggest:g}",
                **self._where("ray.num_cpus"),
            )
        count = self.concurrency or settings.actors
        if count is None:
            count = int(self.ray.cluster_resources().get("CPU", 1) // settings.num_cpus)
        return max(1, count)

    @property
    def follows_the_cluster(self) -> bool:
        """Whether the number of actors is the cluster's CPUs over ``num_cpus``
        (no ``concurrency`` or ``ray.actors`` fixes it): it grows as nodes join."""
        return self.concurrency is None and self.config.ray.actors is None

    # -- running ---------------------------------------------------------------

    def busy_nodes(self) -> set[str]:
        """The nodes whose actors hold a game now (in play or queued): those
        whose loss puts a game back in line."""
        actors = self._actors
        if actors is None:
            return set()
        return {actor.placement.node_id for actor in actors.actors
                if actor.placement is not None and actors.queue.in_flight(actor)}

    def run(self, specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        """Yield each game's record as soon as it is finished (not in schedule order).

        As with the local executor, a lazy iterable of specs is read one spec
        per free actor, after the caller has taken the record that freed it,
        so the caller may end ``specs`` early; from a sequence, known in full,
        the actor gets its next spec before the caller sees the record.  Closing the generator
        (or an exception in the caller, such as Ctrl-C) kills the actors' bots
        and the actors.  A game whose actor dies is played again on another;
        one silent for longer than ``game_deadline`` has its actor killed and
        is played again, and after a second time it is given up
        (:class:`~arena.run.spec_queue.WorkerStalled` once every other game is done).  Raises
        :class:`WorkerDied` when actors keep dying (a game lost its actor
        ``MAX_ATTEMPTS`` times, or none is left or could start)."""
        queue: SpecQueue[_Actor] = SpecQueue(
            specs, self.game_deadline, worker_kind="Ray actor", max_attempts=MAX_ATTEMPTS
        )
        if not queue.fill(1):
            return
        connected_here = self._connect()
        head: HeadWatch | None = None
        actors: _Actors | None = None
        relay: _LiveRelay | None = None
        finished = False
        try:  # (from here, whatever fails disconnects: the survey too)
            if self.conditions is None:
                self.conditions = self._survey()
            queue.game_deadline = self.game_deadline  # (longer where the clock is scaled)
            self.placements.clear()
            self.lost = self.dropped = 0
            head = HeadWatch(self.ray.get_runtime_context().gcs_address)
            actors = self._actors = _Actors(self, queue, ahead=isinstance(specs, Sequence),
                                            names=self._bots_to_check(specs), head=head)
            if self.live_dir is not None:
                relay = _LiveRelay(self.ray, self.live_dir, actors.actors)
            yield from actors.records()
            finished = True
            queue.finish()
        finally:
            if head is not None:
                head.stop()
                self.head_gone = head.gone
            if relay is not None:
                relay.stop()
            if actors is not None:
                self._actors = None
                actors.stop(gently=finished, head_gone=self.head_gone)
            if connected_here:
                self._disconnect()

    def _disconnect(self) -> None:
        """``ray.shutdown()``, unless the head is gone: then Ray's goodbyes
        to it would wait a minute for an answer."""
        self.conditions = None
        if not self.head_gone:
            self.ray.shutdown()

    def _bots_to_check(self, specs: Iterable[GameSpec]) -> list[str]:
        """The bots each actor starts on its node before it plays: those of
        ``specs`` when known in full, else every bot of the file; never one
        that is out of play or barred (their games forfeit at once)."""
        config = self.config
        names = {name for spec in specs for name in spec.players} if isinstance(specs, Sequence) \
            else {bot.name for bot in config.bots}
        skipped = config.competition.out_of_play | {bot.name for bot in config.bots if bot.problem}
        return sorted(names - skipped)

    def _actor_class(self) -> Any:
        # concurrency_groups: stop_now runs on its own thread, beside a game.
        return self.ray.remote(max_restarts=0, concurrency_groups={"control": 1})(GameActor)


@dataclass(eq=False)
class _Actor:
    number: int
    handle: Any
    #: When it was asked for (``time.monotonic()``).
    launched: float
    placement: Placement | None = None

    @property
    def cannot_play(self) -> frozenset[str]:
        """The bots that did not start on its node."""
        return frozenset(problem.bot for problem in self.placement.problems) if self.placement else frozenset()


class _Actors:
    """The actors of one run of a :class:`RayExecutor`, fed from ``queue``,
    and the calls in flight to them: an actor's placement report, or its
    batch of games (a stream of records).  One spec per actor at the start;
    then, from a sequence of specs, more are queued on each actor (quick
    games in batches), so that it never waits for the driver."""

    def __init__(self, executor: RayExecutor, queue: SpecQueue[_Actor], ahead: bool, names: list[str],
                 head: HeadWatch) -> None:
        self.executor = executor
        self.head = head
        #: What the actors' pre-flights on their nodes reported.
        self.checks = NodeChecks(names)
        self.ray = executor.ray
        #: The driver's node: the remote bots' listener is there.
        self.home: str = self.ray.get_runtime_context().get_node_id()
        self.queue = queue
        self.ahead = ahead
        # A test that may stop: a game pair at a time, one queued ahead.
        self.pairs = queue.stoppable
        self.dropped = False
        self.width = executor._actor_count()
        self._set_window()
        self.actor_class = executor._actor_class()
        assert executor.conditions is not None
        self.conditions: Conditions = executor.conditions
        #: The nodes whose bots were found at another niceness (said once a node).
        self.off_nice: set[str] = set()
        self.options: dict[str, Any] = {"num_cpus": executor.config.ray.num_cpus, "scheduling_strategy": "SPREAD"}
        self.actors: list[_Actor] = []
        self.made = 0
        self.calls: dict[Any, _Actor] = {}
        #: The records each batch in flight has still to send.
        self.unread: dict[Any, int] = {}
        #: How long a game lasts, on average, as the driver sees it.
        self.game_s: float | None = None
        # Replacements for lost actors, bounded so that a cluster that
        # kills every actor ends the run instead of feeding it forever.
        self.spare = 2 * self.width + 2
        # Since when actors are being started with none placed (from the start, or after losses).
        self.starting_since = time.monotonic()
        self.cpus = _CpuWatch(self.ray) if executor.follows_the_cluster else None

    def records(self) -> Iterator[GameRecord]:
        """Play every spec of the queue; yield each record as it comes.
        Actors still waiting for a place on the cluster (replacements, say)
        are not waited for once every game is played."""
        # As locally, one spec per actor at the start: an actor is started
        # only for a game there is.
        for _ in range(self.queue.fill(self.width)):
            self._launch()
        while self._more():
            if not self.calls:
                raise WorkerDied("every Ray actor died; every finished game is kept")
            ready, _ = self.ray.wait(list(self.calls), num_returns=1, timeout=1.0)
            check()  # a stop signal, within the second this waits at most
            if self.head.gone:
                raise HeadLost("the cluster's head is gone")
            for actor in self.queue.stalled():
                self._kill_stalled(actor)
            if ready:
                yield from self._answer(ready[0])
            else:
                self._check_started()
                self._check_bots()
            if self.pairs and not self.dropped and self.queue.stopped():
                self._drop_queued()
            self._grow()

    def _grow(self) -> None:
        """A node joined (the cluster has more CPUs than when the actors
        were counted): start as many more actors as its CPUs hold, one for
        each game there is; Ray places them on its free CPUs."""
        if self.cpus is None or self.cpus.total is None:
            return
        width = int(self.cpus.total // self.executor.config.ray.num_cpus)
        if width <= self.width:
            return
        more = self.queue.fill(width - self.width)
        self.width = width
        self._set_window()
        for _ in range(min(more, width - len(self.actors))):
            self._launch()

    def _set_window(self) -> None:
        """Under a test that may stop: pairs go out no further past the first
        one not yet complete than the actors hold when all play on (one
        pair in play and one queued each), so a stalled actor's pair holds
        the others back rather than letting them play on past the verdict
        until its deadline: at most that many pairs are stored past it."""
        if self.pairs:
            self.queue.window = (1 + QUEUED_AHEAD) * self.width

    def _more(self) -> bool:
        """Whether a game waits or is being played; when none is, the next
        spec is taken (the caller may have ended them)."""
        if self.queue.unfinished():
            return True
        if not self.queue.fill(1):
            return False
        for actor in self.actors:
            if actor.placement is not None and self._feed(actor):
                break
        return True

    def _answer(self, call: Any) -> Iterator[GameRecord]:
        """Take the answer of ``call``, which is ready: an actor placed, or records."""
        actor = self.calls.get(call)
        if actor is None:  # the answer of an actor killed meanwhile
            return
        try:
            value = self._read(call)
        except self.ray.exceptions.RayTaskError as exc:  # a bug, not a bot's misbehaviour: report it whole
            if isinstance(exc.cause, ArenaWriteError):  # a node's disk, not a bot: the run stops, as locally
                raise ArenaWriteError(str(exc.cause)) from None
            raise RuntimeError(f"Ray actor {actor.number} failed:\n{exc}") from None
        except self.ray.exceptions.RayError as exc:  # the actor died, its node too, or Ray stopped it
            died = isinstance(exc, self.ray.exceptions.RayActorError)
            self._lose(actor, ACTOR_DIED if died else _first_line(exc))
            if not self._any_placed():
                self.starting_since = time.monotonic()
            return
        if actor.placement is None:
            self._place(actor, value)
        else:
            yield from self._played(actor, value)

    def _read(self, call: Any) -> Any:
        """The placement ``call`` reports, or the records its batch sends next."""
        if call not in self.unread:
            del self.calls[call]
            return self.ray.get(call)
        lines = self.ray.get(next(call))
        self.unread[call] -= len(lines)
        if not self.unread[call]:
            del self.calls[call], self.unread[call]
        return lines

    def _place(self, actor: _Actor, placement: Placement) -> None:
        """An actor started and checked its bots: note where, say which did
        not start there (once a node), and give it its first games."""
        actor.placement = placement
        self.executor.placements[actor.number] = placement
        if placement.nice != self.conditions.nice and placement.node_id not in self.off_nice:
            self.off_nice.add(placement.node_id)
            _log.warning(f"bots run at niceness {placement.nice} on {placement.where}, not {self.conditions.nice} as "
                         "on the others (it did not report before the first game, and its Ray workers cannot go "
                         f"lower): start Ray there with `RAY_worker_niceness={self.conditions.nice} ray start ...`")
        if placement.time_scale is not None:
            # A node that measured itself may be slower than any the survey found.
            self.executor.allow_for(placement.time_scale)
            self.queue.game_deadline = self.executor.game_deadline
        new = self.checks.report(placement.where, placement.problems)
        self._check_bots()  # (first: a bot that starts on no node is one error, not a warning more)
        self.checks.warn(placement.where, new)
        self._feed(actor)
        for _ in range(QUEUED_AHEAD if self.ahead or self.pairs else 0):
            self._feed(actor)

    def _check_bots(self) -> None:
        """Once every actor has started (or has waited for a place
        ``START_TIMEOUT_S``), a bot that started on none of their nodes is
        a start-up failure under the tournament's rule
        (:meth:`NodeChecks.settle`); idle actors then take its games."""
        now = time.monotonic()
        if any(actor.placement is None and now - actor.launched < START_TIMEOUT_S for actor in self.actors):
            return
        placed = [actor for actor in self.actors if actor.placement is not None]
        if self.checks.settle([actor.cannot_play for actor in placed], self.executor.config.startup_failures):
            for actor in placed:
                if not self.queue.in_flight(actor):
                    self._feed(actor)

    def _playable(self, actor: _Actor) -> Callable[[GameSpec], bool] | None:
        """Which specs ``actor`` can play: those of no bot that did not
        start on its node (unless it starts on none)."""
        barred = self.checks.barred(actor.cannot_play)
        return (lambda spec: barred.isdisjoint(spec.players)) if barred else None

    def _drop_queued(self) -> None:
        """The specs stopped (a test decided): every actor with games queued
        behind the one it plays drops them."""
        self.dropped = True
        for actor in self.actors:
            if actor.placement is not None and self.queue.in_flight(actor) > 1:
                actor.handle.drop_queued.options(concurrency_group="control").remote()

    def _played(self, actor: _Actor, lines: list[bytes]) -> Iterator[GameRecord]:
        """Records from ``actor``: give it more games, and yield them."""
        dropped = {line[len(DROPPED):].decode() for line in lines if line.startswith(DROPPED)}
        if dropped:
            self.queue.cancel(actor, dropped)
            self.executor.dropped += len(dropped)
        records = [GameRecord.from_line(line) for line in lines if not line.startswith(DROPPED)]
        if not records:
            return
        took = (time.monotonic() - self.queue.since(actor)) / len(records)
        self.game_s = took if self.game_s is None else self.game_s + (took - self.game_s) / 4
        fresh = self.queue.done(actor, records)
        if self.pairs:
            self._top_up()  # (the window may have moved: actors it held back take pairs again)
        elif self.ahead:
            # Every spec is known: the actor keeps games queued while the
            # records are stored, quick ones in batches.
            size = max(1, min(MAX_BATCH, int(BATCH_S / max(self.game_s, 1e-6))))
            if self.queue.in_flight(actor) <= size * QUEUED_AHEAD:
                self._feed(actor, size)
        yield from fresh
        if not self.ahead and not self.pairs:
            self._feed(actor)

    def _top_up(self) -> None:
        """Under a test that may stop: each placed actor gets a pair to play
        and one queued behind it, as far as there are pairs within the
        window; the idlest first, so that a pair put back goes to a free
        actor rather than behind a busy one."""
        for _ in range(1 + QUEUED_AHEAD):
            placed = [actor for actor in self.actors if actor.placement is not None]
            for actor in sorted(placed, key=self.queue.in_flight):
                # A pair in play and one queued: another once only the queued one is left.
                if self.queue.in_flight(actor) <= 2 and not self.queue.stopped():
                    self._feed(actor)

    def _feed(self, actor: _Actor, count: int = 1) -> bool:
        """Send ``actor`` up to ``count`` games it can play; whether there was one."""
        playable = self._playable(actor)
        batch = self.queue.take_pair(actor, playable) if self.pairs else self.queue.take(actor, count, playable)
        if batch:
            stream = actor.handle.play.options(num_returns="streaming").remote(batch)
            self.calls[stream], self.unread[stream] = actor, len(batch)
        return bool(batch)

    def _launch(self) -> None:
        self.made += 1
        config = self.executor.config
        handle = self.actor_class.options(**self.options).remote(
            config, _text(self.executor.logs_dir), _text(self.executor.scratch_dir), self.made, sys.executable,
            _text(config.ray.working_dir), self.conditions,
        )
        actor = _Actor(self.made, handle, time.monotonic())
        self.actors.append(actor)
        self.calls[handle.placement.remote(self.checks.names, self.home)] = actor

    def _kill_stalled(self, actor: _Actor) -> None:
        self.queue.stall(actor)
        self.ray.kill(actor.handle, no_restart=True)
        self._lose(actor, "silent past the game deadline")

    def _lose(self, actor: _Actor, why: str) -> None:
        """Forget a dead (or killed) actor, put its games back first in line,
        and start another actor in its place."""
        self.executor.lost += 1
        self.actors.remove(actor)
        for call in [call for call, owner in self.calls.items() if owner is actor]:
            del self.calls[call]
            self.unread.pop(call, None)
        self.queue.lose(actor, why)
        if self.spare > 0 and self.queue.unfinished():
            self.spare -= 1
            self._launch()
        else:
            self._check_bots()
        if self.pairs:
            self._top_up()
            return
        for other in self.actors:  # a game put back may be taken at once by an idle actor
            if other.placement is not None and not self.queue.in_flight(other) and self.queue.waiting():
                self._feed(other)

    def _any_placed(self) -> bool:
        return any(actor.placement is not None for actor in self.actors)

    def _check_started(self) -> None:
        if not self._any_placed() and time.monotonic() - self.starting_since > START_TIMEOUT_S:
            raise WorkerDied(
                f"no Ray actor started within {START_TIMEOUT_S:g} s (each needs "
                f"{self.executor.config.ray.num_cpus:g} CPUs; is the cluster busy?); every finished game is kept"
            )

    def stop(self, gently: bool, head_gone: bool = False) -> None:
        """End the actors: after the work, let them quit their bots; otherwise
        kill their bots at once.  Then kill the actors themselves, unless
        the head is gone: Ray kills an actor through the head (the actors
        end with their nodes, which soon follow their head)."""
        ray = self.ray
        if self.cpus is not None:
            self.cpus.stop()
        # An actor still waiting for a place on the cluster has no bots, and
        # would not answer: it is only killed.
        placed = [actor.handle for actor in self.actors if actor.placement is not None]
        if gently:
            calls = [handle.close.remote() for handle in placed]
            timeout = CLOSE_TIMEOUT_S
        else:
            calls = [handle.stop_now.options(concurrency_group="control").remote() for handle in placed]
            timeout = 5.0
        if calls:
            try:
                ray.wait(calls, num_returns=len(calls), timeout=timeout)
            except Exception:  # noqa: BLE001 - the kill below ends them all the same
                pass
        if head_gone:
            return
        for actor in self.actors:
            try:
                ray.kill(actor.handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass


class _CpuWatch:
    """A thread that asks Ray for the cluster's CPUs every
    :data:`GROW_EVERY_S` (:attr:`total`, None until known).  Not on the
    run's own thread: the answer comes from the head, which may be gone."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self.total: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="arena-ray-cpus", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(GROW_EVERY_S):
            try:
                self.total = float(self.ray.cluster_resources().get("CPU", 0))
            except Exception:  # noqa: BLE001 - Ray shutting down, or the head gone: the run's end is near
                return

    def stop(self) -> None:
        """Stop asking; a question the head never answers is not waited for."""
        self._stop.set()
        self._thread.join(timeout=2 * GROW_EVERY_S)


class _LiveRelay:
    """A thread of the driver that asks each placed actor for its game in
    progress every :data:`RELAY_EVERY_S` and writes it as the actor's live
    file on this machine (removed between games and once the actor is gone).
    ``actors`` is the run's list, read, never changed, here.  The actors'
    files an earlier run left (a driver that Ray ended, or ``kill -9``) are
    removed first: their games are not in progress."""

    def __init__(self, ray: Any, directory: Path, actors: list[_Actor]) -> None:
        self.ray = ray
        self.directory = directory
        self.actors = actors
        try:
            left = [name for name in os.listdir(directory) if _SLOT_FILE.fullmatch(name)]
        except OSError:  # no live folder yet
            left = []
        for name in left:
            LiveFeed(directory, name.removesuffix(".json")).close()
        self.feeds: dict[int, LiveFeed] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, name="arena-live-relay", daemon=True)
        self._thread.start()

    def _relay(self) -> None:
        while not self._stop.wait(RELAY_EVERY_S):
            placed = [actor for actor in list(self.actors) if actor.placement is not None]
            calls = {actor.handle.live.options(concurrency_group="control").remote(): actor for actor in placed}
            try:
                ready, _ = self.ray.wait(list(calls), num_returns=len(calls), timeout=1.0) if calls else ([], [])
            except Exception:  # noqa: BLE001 - Ray shutting down: the run's end is near
                return
            for call in ready:
                actor = calls[call]
                try:
                    data = self.ray.get(call)
                except Exception:  # noqa: BLE001 - the actor died: the run puts its game back
                    data = None
                self._feed(actor.number).publish(data if isinstance(data, bytes) else None)
            for number in set(self.feeds) - {actor.number for actor in placed}:
                self.feeds.pop(number).close()

    def _feed(self, number: int) -> LiveFeed:
        if number not in self.feeds:
            self.feeds[number] = LiveFeed(self.directory, _slot(number))
        return self.feeds[number]

    def stop(self) -> None:
        """Stop asking, and remove every live file written."""
        self._stop.set()
        self._thread.join()
        for feed in self.feeds.values():
            feed.close()


def _slot(number: int) -> str:
    """Actor ``number``'s slot: the name of its logs and of its live file."""
    return f"ray{number}"


#: The name of an actor's live file (see :func:`_slot`).
_SLOT_FILE = re.compile(r"ray\d+\.json")


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
