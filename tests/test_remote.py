"""Remote bots (issue 38): bots that play from another machine through
``arena connect``, relayed by the run's listener, all on 127.0.0.1 here.

The bridges are real ``arena connect`` processes, which a test kills (and
their bots with them) by their ids; the tournaments
are real runs.  A remote game must be the very game the same bot plays
locally; a wrong token must not stop the run; a bridge that dies in a game
forfeits it ``disconnected`` after ``reconnect_s``, or finishes it when
started again in time; the network's time is the remote bot's."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
from typer.testing import Result

import needs
from arena.results.show import frames, game_heading
from arena.results.standings import compute_standings
from arena.results.tables import render_standings
from arena.bot.process import LineTooLong
from arena.bot.protocol import MAX_LINE_BYTES
from arena.bot.remote import Disconnected, RemoteBotProcess
from arena.bot.spec import RemoteLink
from arena.game.clock import parse_time_control
from arena.run.bot_option import MatchBot, bot_from_option
from arena.run.config import parse_config, with_debug
from arena.run.match import match_config, play_match
from arena.run.remote_listener import BRIDGE_HEADER, ListenerLimits, RemoteListener
from arena.run.remote_settings import RemoteSettings
from arena.run.remote_tokens import make_token, read_tokens, token_owner
from arena.run.results_dir import VersionChanged, read_results
from arena.run.tournament import run_tournament
from arena.run.yaml_reader import ConfigError
from builders import ROOT, arena as arena_here, running, until
from hostile_clients import Attack
from relay import Proxy

RANDOM_BOT = [sys.executable, str(ROOT / "bots" / "random_bot.py")]
SLOW_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "slow.py")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Bridges:
    """``arena connect`` processes, killed (each with its bot) at the end.
    In this process's session: the arena runs here too, and takes a child
    in a session of its own for a bot's leftover (see ``arena.bot.reaper``)."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.url = f"ws://127.0.0.1:{port}/"
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, token: str, bot: list[str], *extra: str, log: str = "bridge.log",
              inside: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        """A bridge of ``bot``, its command run by ``inside`` when given (a network namespace)."""
        with open(self.directory / log, "wb") as stderr:
            bridge = subprocess.Popen(
                [*inside, sys.executable, "-m", "arena", "connect", self.url, "--token", token, *extra, "--", *bot],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
        self.started.append(bridge)
        return bridge

    def kill(self, bridge: subprocess.Popen[bytes]) -> None:
        """SIGKILL: its bot dies with it (a parent-death signal)."""
        bridge.kill()
        bridge.wait()

    def kill_in_its_first_game(self, bridge: subprocess.Popen[bytes], after_s: float) -> float:
        """Kill ``bridge`` ``after_s`` into its first game (a few moves in); when it was killed."""
        end = time.monotonic() + 30
        while time.monotonic() < end and "started:" not in (self.directory / "bridge.log").read_text():
            time.sleep(0.02)
        time.sleep(after_s)
        self.kill(bridge)
        return time.monotonic()

    def close(self) -> None:
        for bridge in self.started:
            self.kill(bridge)


@pytest.fixture
def bridges(tmp_path: Path) -> Iterator[Bridges]:
    found = Bridges(tmp_path, free_port())
    try:
        yield found
    finally:
        found.close()


def tournament(directory: Path, port: int, bots: dict[str, str], extra: str = "", **settings: object) -> Path:
    """A tournament file of ``bots`` (name -> ``remote`` or a command) on OXONO."""
    head = {"name": "cup", "game": "oxono", "time_control": "10+0.1", "rounds": 1, "concurrency": 2, "seed": 5,
            "output": "results", "remote_listen": f"127.0.0.1:{port}", "remote_wait_s": 20, **settings}
    lines = [f"{key}: {value}" for key, value in head.items()]
    lines.append(extra)
    lines.append("bots:")
    for name, cmd in bots.items():
        lines.append(f"  - {{name: {name}, remote: true}}" if cmd == "remote" else f"  - {{name: {name}, cmd: {cmd}}}")
    path = directory / "cup.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


RANDOM_CMD = " ".join(RANDOM_BOT)


def moves_at_home(file: Path, cmd: str) -> dict[str, list[str]]:
    """Each game's moves in the tournament of ``file`` with its remote bot ``r`` run locally as ``cmd``."""
    local = parse_config(file.read_text().replace("{name: r, remote: true}", f"{{name: r, cmd: {cmd}}}"), path=file)
    summary = run_tournament(replace(local, output=file.parent / "local"))
    return {r.game_id: [m.move for m in r.moves] for r in summary.records}


def test_bridged_bots_play_the_games_and_standings_of_the_same_bots_played_locally(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    local = parse_config(tournament(tmp_path, port, {name: RANDOM_CMD for name in ("a", "b", "c", "d")}).read_text(),
                         path=tmp_path / "cup.yaml")
    at_home = run_tournament(replace(local, output=tmp_path / "local"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "b": RANDOM_CMD, "c": "remote", "d": "remote"})
    for name in ("c", "d"):
        bridges.start(make_token(tmp_path / "cup.tokens", name), RANDOM_BOT, "--connections", "2", log=f"{name}.log")
    events: list[str] = []
    remote = parse_config(file.read_text(), path=file)
    played = run_tournament(remote, on_remote=events.append)

    assert played.played == at_home.played == 24
    assert [r for r in played.records if r.forfeit_by is not None] == []
    moves = {r.game_id: ([m.move for m in r.moves], r.winner, r.reason) for r in at_home.records}
    assert {r.game_id: ([m.move for m in r.moves], r.winner, r.reason) for r in played.records} == moves

    def table(summary, config) -> list[list[str]]:
        text = render_standings(compute_standings(summary.records, [b.name for b in config.bots],
                                                  remote=config.remote_bots))
        # The ranking's rows up to ms/move (times and versions are the machine's), the remote mark aside.
        rows = text.split("\n\n")[0].splitlines()[3:]
        return [row.replace(" (remote)", "").split()[:14] for row in rows]

    assert table(played, remote) == table(at_home, local)
    shown = render_standings(compute_standings(played.records, ["a", "b", "c", "d"], remote=remote.remote_bots))
    assert "c (remote)" in shown and "d (remote)" in shown and "a (remote)" not in shown
    # Read back from the results directory (tournament.json keeps which bots were remote), as arena standings does.
    assert [b.name for b in read_results(tmp_path / "results").standings().bots if b.remote] in (["c", "d"], ["d", "c"])
    report = arena("report", "results", "-o", "report.html", cwd=tmp_path)  # the live view's ranking is the report's
    assert report.exit_code == 0, report.err
    page = (tmp_path / "report.html").read_text()
    assert "c (remote)" in page and "(remote): plays from another machine (arena connect)" in page
    # The lines docs/remote.md quotes.
    assert ("(remote): plays from another machine (arena connect), outside the sandbox and limits; its move times "
            "include the network's round trip, less a margin granted for it") in [line.strip() for line in shown.splitlines()]
    assert events[0] == f"listening for remote bots on ws://127.0.0.1:{port}/"
    assert "c connected from 127.0.0.1" in events and "d connected from 127.0.0.1" in events
    bridge = [line.split(" ", 1)[1] for line in (tmp_path / "c.log").read_text().splitlines()]
    assert f"[1] connected to ws://127.0.0.1:{port}/" in bridge
    assert any(re.fullmatch(r"\[\d\] started the bot \(pid \d+\)", line) for line in bridge)
    assert any(re.fullmatch(r"\[\d\] game r1-a~c-g1 started: black against a", line) for line in bridge), bridge
    assert any(re.fullmatch(r"\[\d\] game r1-a~c-g1 over: (won|lost) \(alignment\)", line) for line in bridge)


def test_a_wrong_missing_or_replaced_token_is_refused_and_logged_and_the_run_goes_on(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"})
    replaced = make_token(tmp_path / "cup.tokens", "r")  # (arena remote token r, run again below: a leaked token's end)
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), RANDOM_BOT)
    wrong = bridges.start("not-the-token", RANDOM_BOT, log="wrong.log")
    old = bridges.start(replaced, RANDOM_BOT, log="replaced.log")
    statuses: list[int] = []

    async def knock(headers: dict[str, str]) -> None:
        async with aiohttp.ClientSession() as http:
            try:
                await http.ws_connect(bridges.url, headers=headers)
            except aiohttp.WSServerHandshakeError as exc:
                statuses.append(exc.status)

    def on_remote(line: str) -> None:
        events.append(line)
        if line.startswith("listening"):  # from the arena's thread, the listener up
            asyncio.run(knock({}))
            asyncio.run(knock({"Authorization": "Bearer " + "x" * 5000}))

    events: list[str] = []
    summary = run_tournament(parse_config(file.read_text(), path=file), on_remote=on_remote)

    assert summary.played == summary.total == 4
    assert [r for r in summary.records if r.forfeit_by is not None] == []
    assert statuses == [401, 401]
    assert wrong.wait(timeout=20) == old.wait(timeout=20) == 2
    assert "refused the token" in (tmp_path / "wrong.log").read_text()
    assert "refused the token" in (tmp_path / "replaced.log").read_text()
    assert events.count("refused a connection from 127.0.0.1: no token") == 1
    assert events.count("refused a connection from 127.0.0.1: a wrong token") == 3  # not the token, replaced, too long
    log = (tmp_path / "results" / "logs" / "remote.log").read_text()
    assert "refused a connection from 127.0.0.1: a wrong token" in log and "r connected from 127.0.0.1" in log


def test_a_remote_bot_is_the_version_its_bridge_reports_and_a_change_of_its_files_stops_the_next_run(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    folder = tmp_path / "team"
    folder.mkdir()
    shutil.copy(ROOT / "bots" / "random_bot.py", folder / "mybot.py")
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, concurrency=1)
    token = make_token(tmp_path / "cup.tokens", "r")

    def run_with_bridge() -> object:
        bridge = bridges.start(token, [sys.executable, "mybot.py"], "--cwd", str(folder))
        try:
            return run_tournament(parse_config(file.read_text(), path=file))
        finally:
            bridges.kill(bridge)

    first = run_with_bridge()
    meta = json.loads((tmp_path / "results" / "tournament.json").read_text())
    entry = next(bot for bot in meta["bots"] if bot["name"] == "r")
    assert entry["fingerprint"]["files"] == {"(as its bridge reports)": bridged_version(folder, "mybot.py")}
    assert {record.versions[color] for record in first.records
            for color, name in record.players.items() if name == "r"} == {entry["version"]}
    (folder / "mybot.py").write_text((folder / "mybot.py").read_text() + "\n# a fix\n")
    with pytest.raises(VersionChanged, match=r"bot 'r' \(\(as its bridge reports\) changed; 4 games by version "):
        run_with_bridge()


def bridged_version(folder: Path, *cmd: str) -> str:
    """What arena connect reports of a bot run as ``cmd`` in ``folder``."""
    from arena.bot.spec import BotConfig
    from arena.bot.version import fingerprint

    return fingerprint(BotConfig(name="x", cmd=(sys.executable, *cmd), options={}, cwd=folder.resolve(), env={})).version


def test_a_bridge_killed_in_a_game_forfeits_it_disconnected_after_reconnect_s(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    # (startup_timeout: how long the next game waits for the bot to come back, before its startup_failure)
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, time_control="60+0", concurrency=1,
                      reconnect_s=1.5, startup_timeout=2)
    bridge = bridges.start(make_token(tmp_path / "cup.tokens", "r"), [*SLOW_BOT, "0.2"])
    killed: list[float] = []

    def kill_in_the_first_game() -> None:
        killed.append(bridges.kill_in_its_first_game(bridge, 0.5))

    killer = threading.Thread(target=kill_in_the_first_game)
    killer.start()
    summary = run_tournament(parse_config(file.read_text(), path=file))
    killer.join()

    first = min(summary.records, key=lambda r: r.index)
    assert first.reason == "disconnected" and first.players[first.forfeit_by] == "r"
    assert "reconnect_s: 1.5" in first.detail and first.moves
    assert time.monotonic() - killed[0] >= 1.5
    second = max(summary.records, key=lambda r: r.index)
    assert second.reason == "startup_failure" and "not connected" in second.detail


def test_a_bridge_killed_in_a_game_and_started_again_within_reconnect_s_finishes_it(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    slow = [*SLOW_BOT, "0.05"]  # plays the first legal move: a new program plays on as the old one would have
    # (reconnect_s and the clock long enough for a bridge to start on a loaded machine: seconds, seen 7 s)
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, time_control="60+0", concurrency=1,
                      reconnect_s=30)
    at_home = moves_at_home(file, " ".join(slow))
    token = make_token(tmp_path / "cup.tokens", "r")
    bridge = bridges.start(token, slow)
    away_s = 0.5
    # The new program keeps its own board from the position it is given, asks for
    # compact turns (the old one did not) and plays the first legal move, as the old one.
    keeping = [sys.executable, str(ROOT / "tests" / "bots" / "compact_bot.py"), "compact", "first"]

    def kill_and_start_again() -> None:
        bridges.kill_in_its_first_game(bridge, 0.3)
        time.sleep(away_s)
        bridges.start(token, keeping, log="again.log")

    restarter = threading.Thread(target=kill_and_start_again)
    events: list[str] = []
    restarter.start()
    summary = run_tournament(parse_config(file.read_text(), path=file), on_remote=events.append)
    restarter.join()

    assert [(r.game_id, r.reason, r.detail) for r in summary.records if r.forfeit_by is not None] == []
    assert {r.game_id: [m.move for m in r.moves] for r in summary.records} == at_home  # before the kill and after
    first = min(summary.records, key=lambda r: r.index)
    assert "r came back as a new program from 127.0.0.1" in events
    assert "r came back as a new program from 127.0.0.1" in (tmp_path / "results" / "logs" / "remote.log").read_text()
    # The new program was handed the game from the position reached, which it played from, and compact turns.
    again = (tmp_path / "again.log").read_text()
    assert re.search(rf"started the bot \(pid \d+\)\n.* game {first.game_id} started: \w+ against a\n", again)
    assert "turn keys: ['clock', 'game_id', 'last_move', 'ply', 'type']" in again and "Traceback" not in again
    # The time it was away is on its clock: the move it was asked for when killed took it.
    seat = [name for name in first.players.values()].index("r")  # (moves alternate from seat 0: no opening)
    assert max(move.ms for move in first.moves[seat::2]) >= away_s * 1000


def test_a_remote_bot_whose_program_exits_in_a_game_crashes_and_plays_the_next(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, concurrency=1)
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), [sys.executable, str(ROOT / "tests" / "bots" / "crash_midgame.py")])
    summary = run_tournament(parse_config(file.read_text(), path=file))

    assert len(summary.records) == 4
    for record in summary.records:  # each game restarts the program, which exits at its 3rd turn
        assert record.reason == "crash" and record.players[record.forfeit_by] == "r", record.detail
        assert "its program ended on its machine: the bot exited with code 3" in record.detail
        assert len(record.moves) in (4, 5)


def test_the_network_s_time_is_the_remote_bot_s(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, time_control='"move 0.1"', concurrency=1)
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), RANDOM_BOT, "--delay-ms", "200")
    summary = run_tournament(with_debug(parse_config(file.read_text(), path=file), ["r"]))

    assert len(summary.records) == 4
    for record in summary.records:
        assert record.reason == "timeout" and record.players[record.forfeit_by] == "r", record.detail
        # The bot's own delay is not the line's: the margin granted is the round trip pings measure, near nothing.
        granted = re.search(r"over its budget of \d+ ms \(100 ms per move \+ 50 ms margin(?: \+ (\d+) ms network margin)?\)",
                            record.detail)
        assert granted and int(granted[1] or 0) < 100, record.detail
        # debug: the arena's side of the wire, as for a local bot
        log = (tmp_path / "results" / "logs" / "r" / "games" / f"{record.game_id}.protocol.log").read_text()
        assert ' > {"type":"turn"' in log and ' < {"type": "ready"' in log


def test_a_game_goes_on_through_dropped_connections_move_for_move(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    slow = " ".join([*SLOW_BOT, "0.03"])
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, concurrency=1, reconnect_s=5)
    at_home = moves_at_home(file, slow)
    proxy = Proxy(port)
    bridges.url = f"ws://127.0.0.1:{proxy.port}/"
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), [*SLOW_BOT, "0.03"])
    done = threading.Event()

    def cut_now_and_then() -> None:
        while not done.wait(0.6):
            if proxy.sockets:
                proxy.cut()

    cutter = threading.Thread(target=cut_now_and_then)
    events: list[str] = []
    cutter.start()
    try:
        summary = run_tournament(parse_config(file.read_text(), path=file), on_remote=events.append)
    finally:
        done.set()
        cutter.join()
        proxy.close()

    assert proxy.cuts >= 3 and events.count("r is back from 127.0.0.1") >= 2, events
    assert "r lost its connection in a game; waiting for it to come back" in events
    assert "connection lost (code 1006); reconnecting, the bot keeps running" in (tmp_path / "bridge.log").read_text()
    assert [r for r in summary.records if r.forfeit_by is not None] == []
    assert {r.game_id: [m.move for m in r.moves] for r in summary.records} == at_home


def test_a_bridge_in_a_network_namespace_plays_through_its_one_way_out(tmp_path, bridges):
    # The sandbox's own namespaces (bubblewrap), with a loopback of their own and no other network.
    alone = (needs.bwrap(), "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--die-with-parent")
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"})
    at_home = moves_at_home(file, RANDOM_CMD)
    way_out = tmp_path / "out.sock"
    proxy = Proxy(port, listen=str(way_out))
    knock = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    knocked = subprocess.run([*alone, sys.executable, "-c", knock], capture_output=True, text=True)
    assert knocked.returncode != 0 and "ConnectionRefusedError" in knocked.stderr  # no other way to the arena from in there
    bridges.url = "ws://127.0.0.1:{port}/"  # (the namespace's own loopback, its port chosen by the relay)
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), RANDOM_BOT,
                  inside=(*alone, sys.executable, str(ROOT / "tests" / "relay.py"), str(way_out), "--"))
    try:
        summary = run_tournament(parse_config(file.read_text(), path=file))
        relayed = len(proxy.sockets)
    finally:
        proxy.close()

    assert [r for r in summary.records if r.forfeit_by is not None] == []
    assert {r.game_id: [m.move for m in r.moves] for r in summary.records} == at_home
    assert relayed == 2  # the bridge's one connection, through the way out


@pytest.mark.parametrize("margin", ["0", "auto"])
def test_a_long_line_is_measured_and_granted_as_a_network_margin_unless_the_file_sets_none(tmp_path, bridges, margin):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "r": "remote"}, time_control='"move 0.15"', concurrency=1,
                      network_margin_ms=margin)
    proxy = Proxy(port, delay_s=0.1)  # a round trip of 200 ms: twice the 100 ms a move may take
    bridges.url = f"ws://127.0.0.1:{proxy.port}/"
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), RANDOM_BOT)
    try:
        summary = run_tournament(parse_config(file.read_text(), path=file))
    finally:
        proxy.close()

    assert len(summary.records) == 4
    for record in summary.records:
        seat = next(color for color, name in record.players.items() if name == "r")
        if margin == "0":  # the line's time is the bot's: it loses every game on time
            assert record.reason == "timeout" and record.forfeit_by == seat, (record.reason, [m.ms for m in record.moves])
            assert "over its budget of 200 ms (150 ms per move + 50 ms margin)" in record.detail
            continue
        assert record.forfeit_by is None, (record.detail, [(m.ms, m.latency_ms) for m in record.moves])
        assert 180 <= record.network_margin_ms[seat] <= 250  # the round trip measured, at most 250 ms
        remote = [move for move in record.moves if move.latency_ms is not None]  # the local bot's have none
        assert remote and abs(2 * len(remote) - len(record.moves)) <= 1
        # Its clock shows the line (a random bot answers in a millisecond): the clock starts once the turn is
        # handed on, so a worker put off between the two by a busy machine sees a little less now and then.
        times = sorted(move.ms for move in remote)
        assert times[0] >= 150 and times[len(times) // 2] >= 200, times
        # The round trip a move records is the line's, never less; a busy machine adds to some of them.
        trips = sorted(move.latency_ms for move in remote)
        assert trips[0] >= 180 and trips[len(trips) // 2] <= 400, trips
        # arena show says both
        assert f"r granted {record.network_margin_ms[seat]:g} ms a move for the network" in game_heading(record)
        assert re.search(r" ms \(round trip [1-4]\d\d ms\)\n", "\n".join(frames(record)))


def test_hostile_clients_cost_the_games_nothing_and_the_listener_holds_little(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    file = tournament(tmp_path, port, {"a": RANDOM_CMD, "b": RANDOM_CMD, "r": "remote"})
    bridges.start(make_token(tmp_path / "cup.tokens", "r"), RANDOM_BOT, "--connections", "2")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with Attack("127.0.0.1", port, rate=200, slow=100) as attack:
        run = subprocess.Popen([sys.executable, "-m", "arena", "run", str(file)], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak_kb = 0
        while run.poll() is None:  # the arena's own peak, listener and all (not its workers')
            with contextlib.suppress(OSError):
                if found := re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{run.pid}/status").read_text()):
                    peak_kb = int(found[1])
            time.sleep(0.1)
        out, err = run.communicate(timeout=60)

    assert run.returncode == 0, err
    records = read_results(tmp_path / "results").records
    assert len(records) == 12 and [r for r in records if r.forfeit_by is not None] == []
    assert min(attack.tried[kind] for kind in ("storm", "slowloris", "wrong token", "huge head")) > 0, attack.tried
    assert attack.tried["slowloris"] > 64  # let go past the header timeout, or refused past the bound, and tried again
    log = (tmp_path / "results" / "logs" / "remote.log").read_text().splitlines()
    refused = [line for line in log if "refused" in line]
    assert len(refused) <= 21, refused  # said 20 times a minute at most, then counted
    # Its first junk connections (refused, or gone without a request) served, 127.0.0.2's next ones are
    # closed as they come, which is said (a wrong token's refusal, said, is another test's).
    shed = "closing the connections of 127.0.0.2 as they come: 32 connections without a known token in 10 s"
    assert any(line.endswith(shed) for line in log), log
    # No traceback of a junk request (aiohttp's), or of a refusal the client had reset already (asyncio's).
    assert "Traceback" not in out + err and "Error handling request" not in err and "Exception in callback" not in err
    assert 0 < peak_kb < 250_000, f"{peak_kb // 1024} MB"


def test_arena_match_plays_a_bridged_bot_as_the_same_bot_played_locally(tmp_path, bridges):
    port = int(bridges.url.rsplit(":", 1)[1].strip("/"))
    control = parse_time_control("10+0.1")
    at_home = play_match(match_config([RANDOM_CMD, MatchBot(RANDOM_CMD, name="r")], "oxono", control, seed=4,
                                      output=tmp_path / "local"), 4)
    tokens = tmp_path / "match.tokens"
    bridges.start(make_token(tokens, "r"), RANDOM_BOT)
    remote = match_config([RANDOM_CMD, bot_from_option("name=r,remote=true")], "oxono", control, seed=4,
                          output=tmp_path / "remote", remote=RemoteSettings(port=port, tokens=tokens, wait_s=20))
    events: list[str] = []
    played = play_match(remote, 4, keep_records=True, on_remote=events.append)

    assert played.games == at_home.games == 4 and not played.forfeits
    assert [[m.move for m in r.moves] for r in played.records] == [[m.move for m in r.moves] for r in at_home.records]
    assert "r connected from 127.0.0.1" in (tmp_path / "remote" / "logs" / "remote.log").read_text()
    assert "r connected from 127.0.0.1" in events
    with pytest.raises(ConfigError, match="a remote bot has a name and no cmd"):
        bot_from_option("name=r,remote=true,cmd=./bot")


@contextlib.contextmanager
def a_listener(tmp_path: Path, limits: ListenerLimits = ListenerLimits(),
               ) -> Iterator[tuple[RemoteListener, asyncio.AbstractEventLoop, str, list[str]]]:
    """Without a tournament: a listener of bot ``r``, an event loop for a
    client speaking for its bridge, the bridge's token and what the listener said."""
    token = make_token(tmp_path / "t.tokens", "r")
    said: list[str] = []
    with RemoteListener(["r"], read_tokens(tmp_path / "t.tokens"), "127.0.0.1", 0, said.append, limits) as listener:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            yield listener, loop, token, said
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)


async def greeted(http: aiohttp.ClientSession, url: str, token: str) -> aiohttp.ClientWebSocketResponse:
    """A bridge's connection, once it answered ``hello`` and was given its turn."""
    ws = await http.ws_connect(url, headers={"Authorization": f"Bearer {token}"})
    assert (await ws.receive()).data.startswith('{"type":"hello"')
    await ws.send_str('{"type":"ready"}')
    await ws.receive()  # the turn
    return ws


class Answering:
    """A bridge speaking for bot ``r`` on a connection of its own (its id
    ``bridge``): ``ready`` to ``hello``, and its id for a move; what it is
    sent in ``got``."""

    def __init__(self, url: str, token: str, bridge: str) -> None:
        self.url, self.token, self.bridge = url, token, bridge
        self.got: list[str] = []
        self.ws: aiohttp.ClientWebSocketResponse | None = None

    async def connect(self, http: aiohttp.ClientSession) -> None:
        self.ws = await http.ws_connect(self.url, headers={"Authorization": f"Bearer {self.token}",
                                                           BRIDGE_HEADER: self.bridge})
        asyncio.get_running_loop().create_task(self._answer(self.ws))

    async def _answer(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for message in ws:
            self.got.append(message.data)
            if message.data.startswith('{"type":"hello"'):
                await ws.send_str('{"type":"ready"}')
            elif message.data.startswith('{"type":"turn"'):
                await ws.send_str(json.dumps({"type": "move", "move": self.bridge}))


def test_a_second_bridge_with_the_same_token_is_one_more_connection_of_the_bot_and_takes_no_game(tmp_path):
    with a_listener(tmp_path, ListenerLimits(per_bot=2)) as (listener, loop, token, said):
        http = asyncio.run_coroutine_threadsafe(session(), loop).result(5)
        first, second = Answering(listener.url, token, "first"), Answering(listener.url, token, "second")
        asyncio.run_coroutine_threadsafe(first.connect(http), loop).result(5)
        game = in_a_game(listener)
        assert game.read_line(time.monotonic() + 5) == '{"type": "move", "move": "first"}'
        asyncio.run_coroutine_threadsafe(second.connect(http), loop).result(5)
        end = time.monotonic() + 5  # (said once the handshake's answer is on its way)
        while said.count("r connected from 127.0.0.1") < 2 and time.monotonic() < end:
            time.sleep(0.02)
        assert said.count("r connected from 127.0.0.1") == 2
        with pytest.raises(aiohttp.WSServerHandshakeError, match="503"):  # the bot's bound, logged
            asyncio.run_coroutine_threadsafe(Answering(listener.url, token, "third").connect(http), loop).result(5)
        assert "refused a connection of r from 127.0.0.1: it has 2 already, the most taken" in said
        game.send_line(b'{"type":"turn"}\n', time.monotonic() + 5)
        assert game.read_line(time.monotonic() + 5) == '{"type": "move", "move": "first"}'
        assert second.got == []  # the first bridge's game is its own
        assert first.ws is not None
        asyncio.run_coroutine_threadsafe(first.ws.close(), loop).result(5)
        game.send_line(b'{"type":"turn"}\n', time.monotonic() + 5)
        with pytest.raises(Disconnected):  # its connection lost, the game waits for it: not for the second
            game.read_line(time.monotonic() + 0.5)
        assert second.got == []
        game.kill()
        again = RemoteBotProcess("r", RemoteLink(listener.hub, 1.0))
        again.start(5.0)  # the bot's next game: the second bridge's
        again.send_line(b'{"type":"hello"}\n', time.monotonic() + 5)
        assert again.read_line(time.monotonic() + 5) == '{"type":"ready"}' and second.got == ['{"type":"hello"}']
        again.kill()
        asyncio.run_coroutine_threadsafe(http.close(), loop).result(5)


async def session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession()


def in_a_game(listener: RemoteListener) -> RemoteBotProcess:
    """The handle a worker uses, in a game: ``hello`` answered, the turn sent."""
    end = time.monotonic() + 10
    while "r" not in listener.connected():
        assert time.monotonic() < end, "r never connected"
        time.sleep(0.05)
    process = RemoteBotProcess("r", RemoteLink(listener.hub, 1.0))
    process.start(5.0)
    process.send_line(b'{"type":"hello"}\n', time.monotonic() + 5)
    assert process.read_line(time.monotonic() + 5) == '{"type":"ready"}'
    process.send_line(b'{"type":"turn"}\n', time.monotonic() + 5)
    return process


def test_the_listener_bounds_a_line_and_the_log_of_refusals(tmp_path):
    with a_listener(tmp_path) as (listener, loop, token, said):

        async def refused(count: int) -> int:
            async with aiohttp.ClientSession() as http:
                for _ in range(count):
                    with contextlib.suppress(aiohttp.WSServerHandshakeError):
                        await http.ws_connect(listener.url, headers={"Authorization": "Bearer wrong"})
            return count

        async def bridge() -> None:  # sends a line over the limit
            async with aiohttp.ClientSession() as http:
                ws = await greeted(http, listener.url, token)
                await ws.send_str("x" * (MAX_LINE_BYTES + 10))
                await ws.receive()

        assert asyncio.run_coroutine_threadsafe(refused(30), loop).result(30) == 30
        assert said.count("refused a connection from 127.0.0.1: a wrong token") == 20
        relay = asyncio.run_coroutine_threadsafe(bridge(), loop)
        process = in_a_game(listener)
        with pytest.raises(LineTooLong):
            process.read_line(time.monotonic() + 5)
        process.kill()
        relay.result(10)


def test_a_frame_of_many_lines_is_as_many_messages_of_the_rate(tmp_path):
    # One frame of thousands of newlines would otherwise hold the listener's loop (every bridge's) for seconds.
    with a_listener(tmp_path) as (listener, loop, token, said):

        async def bridge() -> int:
            async with aiohttp.ClientSession() as http:
                ws = await greeted(http, listener.url, token)
                await ws.send_str("\n" * 5000)
                while (message := await ws.receive()).type != aiohttp.WSMsgType.CLOSE:
                    pass
                return message.data

        relay = asyncio.run_coroutine_threadsafe(bridge(), loop)
        process = in_a_game(listener)
        assert relay.result(20) == aiohttp.WSCloseCode.POLICY_VIOLATION
        assert any("messages a second: connection closed" in line for line in said), said
        process.kill()


def test_the_listeners_log_is_never_written_through_a_link(tmp_path):
    from arena.run.remote_bots import event_log

    elsewhere, results = tmp_path / "elsewhere", tmp_path / "results"
    elsewhere.mkdir()
    results.mkdir()
    (results / "logs").symlink_to(elsewhere)  # a results directory handed over, with a link in it
    echoed: list[str] = []
    event_log(results, echoed.append)("team-x connected")
    assert echoed == ["team-x connected"] and list(elsewhere.iterdir()) == []
    (results / "logs").unlink()
    event_log(results)("team-x connected")
    assert (results / "logs" / "remote.log").read_text().endswith(" team-x connected\n")


def test_tokens_made_at_once_are_all_kept(tmp_path):
    # (a script making every team's token at once: each reads the file the one before wrote)
    path = tmp_path / "cup.tokens"
    teams = [f"team-{n}" for n in range(12)]
    with concurrent.futures.ThreadPoolExecutor(len(teams)) as pool:
        tokens = dict(zip(teams, pool.map(lambda team: make_token(path, team), teams)))
    digests = read_tokens(path)
    assert sorted(digests) == sorted(teams)
    assert all(token_owner(digests, token) == team for team, token in tokens.items())
    assert not list(tmp_path.glob(".cup.tokens.*.tmp"))


def test_a_token_is_shown_once_and_only_its_digest_is_kept(tmp_path):
    path = tmp_path / "cup.tokens"
    token = make_token(path, "team-x")
    other = make_token(path, "team-y")
    text = path.read_text()
    assert token not in text and other not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    digests = read_tokens(path)
    assert token_owner(digests, token) == "team-x" and token_owner(digests, other) == "team-y"
    assert token_owner(digests, "") is None and token_owner(digests, token + "x") is None
    assert token_owner(digests, "\udcff\udcfe") is None and token_owner(digests, "é" * 8) is None  # (no traceback)
    renewed = make_token(path, "team-x")
    assert token_owner(read_tokens(path), token) is None and token_owner(read_tokens(path), renewed) == "team-x"


def arena(*args: str, cwd: Path) -> Result:
    """``arena ARGS`` from ``cwd``, in this process (a process of its own adds
    the arena's import to commands that start no bridge), with no
    TOTEM_TOKEN of the environment's."""
    token = os.environ.pop("TOTEM_TOKEN", None)
    try:
        with contextlib.chdir(cwd):
            return arena_here(*args)
    finally:
        if token is not None:
            os.environ["TOTEM_TOKEN"] = token


def test_the_commands_make_a_token_and_refuse_a_bridge_that_cannot_run(tmp_path):
    (tmp_path / "cup.yaml").write_text(f"game: oxono\ntime_control: 5+0.1\nbots:\n  - {{name: a, cmd: {RANDOM_CMD}}}\n"
                                       "  - {name: team-x, remote: true}\n")
    made = arena("remote", "token", "team-x", "--tournament", "cup.yaml", cwd=tmp_path)
    assert made.exit_code == 0, made.err
    token = made.out.strip()
    assert token_owner(read_tokens(tmp_path / "cup.tokens"), token) == "team-x" and "shown this once" in made.err
    missing = arena("connect", "ws://127.0.0.1:1/", "--token", token, "--", "./nobot", cwd=tmp_path)
    assert missing.exit_code == 2 and "the bot cannot start: ./nobot not found" in missing.err
    tokenless = arena("connect", "ws://127.0.0.1:1/", "--", *RANDOM_BOT, cwd=tmp_path)
    assert tokenless.exit_code == 2 and "no token: pass --token TOKEN or set TOTEM_TOKEN" in tokenless.err
    checked = arena("check", "cup.yaml", "-n", "2", cwd=tmp_path)
    assert checked.exit_code == 0, checked.out + checked.err
    assert "all 1 bots passed 2 games each against the random bot (1 remote, not checked here)" in checked.out
    assert "not checked here: a remote bot runs on its author's" in checked.out


def test_a_remote_bot_is_named_without_a_command_and_needs_a_port(tmp_path):
    with pytest.raises(ConfigError, match="cmd does not apply"):
        parse_config("name: t\ngame: oxono\ntime_control: 5+0.1\nbots:\n  - {name: a, cmd: x}\n"
                     "  - {name: r, remote: true, cmd: ./bot}\n", base_dir=tmp_path)
    config = parse_config(f"name: t\ngame: oxono\ntime_control: 5+0.1\nbots:\n  - {{name: a, cmd: {RANDOM_CMD}}}\n"
                          "  - {name: r, remote: true}\n", path=tmp_path / "t.yaml")
    assert config.remote_bots == ("r",) and config.remote.tokens == tmp_path / "t.tokens"
    with pytest.raises(ConfigError, match="need a port"):
        run_tournament(config)
    assert config.remote.network_margin_ms is None and config.remote.link().network_margin_ms is None  # auto
    head = "name: t\ngame: oxono\ntime_control: 5+0.1\nbots:\n  - {name: r, remote: true}\n  - {name: s, remote: true}\n"
    for value, margin in (("auto", None), ("40", 40.0), ("0", 0.0)):
        assert parse_config(f"network_margin_ms: {value}\n{head}", base_dir=tmp_path).remote.network_margin_ms == margin
    for value, told in (("-1", "must be not negative"), ("fast", "must be auto or a number of milliseconds")):
        with pytest.raises(ConfigError, match=f"network_margin_ms: {told}"):
            parse_config(f"network_margin_ms: {value}\n{head}", base_dir=tmp_path)


def test_a_connection_without_a_request_is_let_go_and_their_number_is_bounded(tmp_path):
    # Connections that never authenticate (silent, or refused and kept open) were held for good.
    from arena.run.connection_limits import Limits
    from arena.run.remote_listener import ListenerLimits

    make_token(tmp_path / "t.tokens", "r")
    digests = read_tokens(tmp_path / "t.tokens")
    network = Limits(connections=8, per_address=8, header_timeout_s=1.0, idle_timeout_s=1.0)
    with RemoteListener(["r"], digests, "127.0.0.1", 0, lambda _: None, ListenerLimits(network=network)) as listener:
        silent = [socket.create_connection(("127.0.0.1", listener.port), timeout=5) for _ in range(8)]
        extra = socket.create_connection(("127.0.0.1", listener.port), timeout=5)
        assert extra.recv(100).startswith(b"HTTP/1.1 503")  # beyond the bound: refused without a byte read
        time.sleep(2.0)
        for sock in silent:  # past the header timeout: let go
            assert closed(sock)
            sock.close()
        extra.close()
        refused = socket.create_connection(("127.0.0.1", listener.port), timeout=5)
        refused.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n\r\n")
        answer = b""
        while chunk := refused.recv(4096):  # the refusal, then the connection closed
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 401") and b"Connection: close" in answer
        refused.close()


def an_answer(port: int, source: str, head: bytes) -> bytes:
    """The first bytes answered to ``head`` sent from ``source`` (b"": the connection closed unanswered)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as sock:
        try:
            sock.sendall(head)
            return sock.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            return b""


def upgrade(token: str) -> bytes:
    return (b"GET / HTTP/1.1\r\nHost: arena\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            b"Authorization: Bearer " + token.encode() + b"\r\n\r\n")


def junk(port: int, source: str, count: int) -> None:
    """``count`` connections from ``source`` closed without a request."""
    for _ in range(count):
        socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)).close()


def eventually(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()


def test_an_address_that_floods_junk_is_closed_at_accept_and_served_again_once_it_stops(tmp_path):
    # A flood of junk connections cost the listener a transport, aiohttp's protocol and a parse each:
    # CPU the games on the same machine would have had.  (From addresses of their own: another test's
    # attack comes from 127.0.0.2, and may find this listener on the port it was given and let go.)
    from arena.run.connection_limits import Limits

    network = Limits(shed_after=4, shed_window_s=2.0)
    with a_listener(tmp_path, ListenerLimits(network=network)) as (listener, loop, token, said):
        shed = "closing the connections of 127.0.0.5 as they come: 4 connections without a known token in 2 s"
        assert an_answer(listener.port, "127.0.0.5", upgrade("wrong")).startswith(b"HTTP/1.1 401")
        junk(listener.port, "127.0.0.5", 3)
        assert eventually(lambda: shed in said), said
        stopped = time.monotonic()
        assert an_answer(listener.port, "127.0.0.5", upgrade("wrong")) == b""  # closed as it came, unread
        assert listener._guard.shed == 1
        # Another address is served all the while, and a known token from it is served too.
        assert an_answer(listener.port, "127.0.0.1", upgrade("wrong")).startswith(b"HTTP/1.1 401")
        assert an_answer(listener.port, "127.0.0.1", upgrade(token)).startswith(b"HTTP/1.1 101")
        # The flood over (the tries closed at accept do not count), 127.0.0.5 is served again after the window
        # (its 2 s, not the default 10 s).
        answers: list[bytes] = []
        assert eventually(lambda: answers.append(an_answer(listener.port, "127.0.0.5", upgrade("wrong")))
                          or answers[-1].startswith(b"HTTP/1.1 401"), 30), (answers[-3:], len(answers), listener._guard.shed)
        assert time.monotonic() - stopped < 9.0


def test_an_address_that_showed_a_known_token_is_never_closed_at_accept(tmp_path):
    from arena.run.connection_limits import Limits

    network = Limits(shed_after=4, shed_window_s=60.0)
    with a_listener(tmp_path, ListenerLimits(network=network)) as (listener, loop, token, said):
        assert an_answer(listener.port, "127.0.0.5", upgrade(token)).startswith(b"HTTP/1.1 101")
        junk(listener.port, "127.0.0.5", 20)
        assert an_answer(listener.port, "127.0.0.5", upgrade("wrong")).startswith(b"HTTP/1.1 401")
        assert an_answer(listener.port, "127.0.0.5", upgrade(token)).startswith(b"HTTP/1.1 101")
        # whereas an address that never showed one is shed after as many
        junk(listener.port, "127.0.0.6", 4)
        assert eventually(lambda: any("closing the connections of 127.0.0.6" in line for line in said)), said
        assert an_answer(listener.port, "127.0.0.6", upgrade("wrong")) == b""
        assert listener._guard.shed == 1 and not any("127.0.0.5 as they come" in line for line in said)


def closed(sock: socket.socket) -> bool:
    """Whether the other end closed ``sock`` (or reset it)."""
    sock.settimeout(5)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def test_the_listener_runs_in_a_process_of_its_own_that_ends_with_the_run(tmp_path):
    from arena.run.listener_process import ListenerError, ListenerProcess

    make_token(tmp_path / "t.tokens", "r")
    digests = read_tokens(tmp_path / "t.tokens")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ListenerError, match=rf"cannot listen for remote bots on 127.0.0.1:{taken.getsockname()[1]}: "):
            ListenerProcess(["r"], digests, "127.0.0.1", taken.getsockname()[1], print).start()
    said: list[str] = []
    with ListenerProcess(["r"], digests, "127.0.0.1", 0, said.append) as listener:
        child = listener._child
        assert child is not None and child.pid != os.getpid() and os.path.exists(listener.hub)
        assert listener.url == f"ws://127.0.0.1:{listener.port}/"
        hub = listener.hub
    assert child.poll() is not None and not os.path.exists(hub)  # closed with the run
    # A run killed outright takes its listener with it (its standard input ends).
    script = ("import sys, time\nfrom arena.run.listener_process import ListenerProcess\n"
              f"listener = ListenerProcess(['r'], {digests!r}, '127.0.0.1', 0, print)\nlistener.start()\n"
              "print(listener._child.pid, flush=True)\ntime.sleep(60)\n")
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout is not None
    pid = int(run.stdout.readline())
    run.kill()
    run.wait()
    until(lambda: not running(pid), 10, "the listener ended with its run")
