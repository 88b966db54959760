"""``arena serve``: the live feed of the games in progress, the server's
refusals (paths out of the logs, a missing token, another Host), its headers,
its status line, and 50 event streams served while a tournament runs.

The browser's side (boards moving, standings, bracket, the finished line) is
in test_live_browser.py."""

from __future__ import annotations

import asyncio
import fcntl
import html
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest
from aiohttp import ClientSession, ClientTimeout
from aiohttp.test_utils import TestClient, TestServer

import engine
from arena.game.clock import Clock, TimeControl
from arena.game.records import GameRecord
from arena.game.referee import Referee
from arena.live import delta, peers
from arena.live import server as live_server
from arena.live.server import CSP, RESULTS_EVERY_S, RESULTS_SHARE, Hub, make_app, serve
from arena.live.state import LiveState
from arena.results.store import current_run
from arena.results.live_feed import LIVE_DIR, LiveFeed, read_live_games
from builders import BOTS, ROOT, arena, assert_one_line_error, copy_results, spec, tournament_file, until

SLOW_RANDOM = f"[python, {BOTS / 'slow_random.py'}, '{{delay}}']"


def slow_file(directory: Path, delay: float = 0.02, bots: tuple[str, ...] = ("ann", "bob", "cy"), **settings: object) -> Path:
    cmd = SLOW_RANDOM.format(delay=delay)
    return tournament_file(directory, bots, cmds={b: cmd for b in bots}, cwd=None, **settings)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A finished two-bot tournament (four games), its results directory."""
    directory = tmp_path_factory.mktemp("played")
    ran = arena("run", slow_file(directory, 0.0, ("ann", "bob")))
    assert ran.exit_code == 0, ran.err
    return directory / "out"


def fetch(app, path: str, **options) -> tuple[int, dict[str, str], str]:
    """``app()``'s answer to GET ``path``: made anew, since an application is bound to one event loop."""
    async def go():
        async with TestClient(TestServer(app())) as client:
            response = await client.get(path, allow_redirects=False, **options)
            return response.status, dict(response.headers), await response.text()
    return asyncio.run(go())


def raw(app, target: str, host: str = "127.0.0.1") -> tuple[int, str]:
    """A request line sent as written (no client normalizes ``..`` or ``%2e`` away)."""
    async def go():
        server = TestServer(app())
        await server.start_server()
        try:
            reader, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
            data = (await reader.read()).decode(errors="replace")
            writer.close()
            return int(data.split()[1]), data.partition("\r\n\r\n")[2]
        finally:
            await server.close()
    return asyncio.run(go())


# -- the live feed ---------------------------------------------------------------------


def referee_for(game_id: str = "r1-ann~bob-g1") -> Referee:
    game = engine.get_game("oxono")
    record = GameRecord.for_spec(spec(1, ("ann", "bob"), game_id=game_id, game="oxono"), game.colors,
                                 TimeControl(5000, 100).to_json())
    return Referee(game, game.new_state(), record, Clock(TimeControl(5000, 100)), [None, None])


def test_a_feed_publishes_the_last_move_of_a_burst_and_removes_the_game_at_its_end(tmp_path):
    feed = LiveFeed(tmp_path / LIVE_DIR, "w1", interval_s=0.2)
    referee = referee_for()
    game = referee.game
    for _ in range(5):  # five moves in a burst: fewer writes, the last one on file all the same
        referee.apply(game.legal_moves(referee.state)[0], 1.0, None)
        feed.move(referee)
    shown = until(lambda: [g for g in read_live_games(tmp_path) if len(g.moves) == 5])
    assert list(shown[0].cells) == [c for row in game.to_json(referee.state)["board"] for c in row]
    assert shown[0].players == ("ann", "bob") and shown[0].to_move == 1
    feed.end()
    assert read_live_games(tmp_path) == []
    assert not (tmp_path / LIVE_DIR / "w1.json").exists()


def test_a_held_game_is_written_by_whoever_relays_it(tmp_path):
    """A Ray actor holds its game (no directory); the driver publishes it: the
    same board as a feed that writes its own file, and gone when published as None."""
    held = LiveFeed(None, "ray1")
    assert held.snapshot() is None
    referee = referee_for()
    for _ in range(3):
        referee.apply(referee.game.legal_moves(referee.state)[0], 1.0, None)
        held.move(referee)
    relay = LiveFeed(tmp_path / LIVE_DIR, "ray1")
    relay.publish(held.snapshot())
    own = LiveFeed(tmp_path / "own" / LIVE_DIR, "w1", interval_s=0.01)
    own.move(referee)
    mine = until(lambda: read_live_games(tmp_path / "own"))
    # The same game; only when its clock held differs (each file's own writing).
    assert [replace(g, clock_at=0.0) for g in read_live_games(tmp_path)] == [replace(mine[0], clock_at=0.0)]
    assert len(mine[0].moves) == 3
    assert not list((tmp_path / LIVE_DIR).glob(".*"))  # no temporary file left
    held.end()
    relay.publish(held.snapshot())
    assert read_live_games(tmp_path) == [] and list((tmp_path / LIVE_DIR).iterdir()) == []


def test_a_closed_feed_removes_its_file_and_lets_go_of_the_folder(tmp_path):
    # The run's relay makes a feed per actor for each run (a Swiss: each round): none may hold a descriptor after.
    referee = referee_for()
    open_fds = len(os.listdir("/proc/self/fd"))
    feed = LiveFeed(tmp_path / LIVE_DIR, "ray1")
    feed.publish(_encoded(referee))
    assert [g.game_id for g in read_live_games(tmp_path)] == [referee.record.game_id]
    feed.close()
    assert list((tmp_path / LIVE_DIR).iterdir()) == [] and len(os.listdir("/proc/self/fd")) == open_fds


def test_a_game_whose_file_was_never_written_removes_none_but_a_stale_one_goes(tmp_path, monkeypatch):
    """An instant game ends before its file is first written: ending it is
    no system call; a file a killed run left is removed by the first end."""
    folder = tmp_path / LIVE_DIR
    folder.mkdir()
    (folder / "w1.json").write_text("{}")  # left by a run killed mid-game
    feed = LiveFeed(folder, "w1", interval_s=60)
    unlinked: list[str] = []
    real_unlink = os.unlink
    monkeypatch.setattr(os, "unlink", lambda path, **kw: (unlinked.append(path), real_unlink(path, **kw))[1])
    feed.end()
    assert unlinked == ["w1.json"] and list(folder.iterdir()) == []
    for _ in range(3):  # games that end unwritten
        feed.end()
    assert unlinked == ["w1.json"]
    feed.move(referee_for())  # the next game is written at once: ending it removes its file
    until(lambda: (folder / "w1.json").exists())
    feed.end()
    assert unlinked.count("w1.json") == 2 and not (folder / "w1.json").exists()


def _encoded(referee: Referee) -> bytes:
    held = LiveFeed(None, "held")
    held.move(referee)
    data = held.snapshot()
    assert data is not None
    return data


def test_a_game_already_recorded_is_not_in_progress(tmp_path):
    feed = LiveFeed(tmp_path / LIVE_DIR, "w1", interval_s=0.01)
    feed.move(referee_for("r1-ann~bob-g1"))
    until(lambda: read_live_games(tmp_path))
    assert read_live_games(tmp_path, recorded={"r1-ann~bob-g1"}) == []


def test_forged_live_files_are_skipped(tmp_path):
    live = tmp_path / LIVE_DIR
    live.mkdir()
    good = {"id": "g", "game": "oxono", "round": 1, "players": ["a", "b"], "opening": 0, "opening_moves": [],
            "moves": [], "clock_ms": [1, 2], "per_move_ms": [None, None]}
    (live / "good.json").write_text(json.dumps(good))
    (live / "illegal.json").write_text(json.dumps({**good, "id": "i", "moves": ["Xa1 a2"]}))
    (live / "three.json").write_text(json.dumps({**good, "id": "t", "players": ["a", "b", "c"]}))
    (live / "game.json").write_text(json.dumps({**good, "id": "x", "game": "chess"}))
    (live / "huge.json").write_text(json.dumps({**good, "id": "h", "players": ["a" * 20_000, "b"]}))
    (live / "junk.json").write_text("{not json")
    (live / "link.json").symlink_to(live / "good.json")
    assert [g.game_id for g in read_live_games(tmp_path)] == ["g"]


class _CountedState:
    """A LiveState's surface for the Hub: results that change when told, readings counted."""

    def __init__(self) -> None:
        self.cost, self.reads, self.key, self.run, self.generation = 0.0, 0, 0, None, 0

    def results_key(self):
        return (self.key, None, self.run)

    def live_key(self):
        return ()

    def refresh(self) -> None:
        self.reads += 1

    def snapshot(self):
        return {}


def test_the_results_are_read_for_at_most_a_share_of_the_time_but_a_run_starting_at_once(monkeypatch):
    state, clock = _CountedState(), [1000.0]
    monkeypatch.setattr(live_server.time, "monotonic", lambda: clock[0])
    hub = Hub(state)

    async def polls() -> list[int]:
        reads = []
        await hub.poll()
        reads.append(state.reads)  # the first look reads
        state.cost = 1.0  # that reading and its page cost a second: the next one after 1 / RESULTS_SHARE
        pause = state.cost / RESULTS_SHARE
        assert pause > RESULTS_EVERY_S
        for dt, key, run in ((pause - 1, 1, None), (0.9, 2, None), (0.2, 2, None), (1, 3, "run")):
            clock[0] += dt
            state.key, state.run = key, run
            await hub.poll()
            reads.append(state.reads)
        return reads

    # Changed results wait out the pause; a run starting (or ending) is read at once.
    assert asyncio.run(polls()) == [1, 1, 1, 2, 3]
    hub.close()


# -- the server: refusals, headers, status ---------------------------------------------


def test_only_the_logs_folder_is_served_and_no_link_out_of_it(played, tmp_path):
    log = next((played / "logs" / "ann" / "games").glob("*.log"))
    (played / "logs" / "ann" / "games" / "evil.log").symlink_to("/etc/passwd")
    app = lambda: make_app(LiveState(played))  # noqa: E731 — an app is bound to one event loop
    status, headers, text = fetch(app, f"/logs/ann/games/{log.name}")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and "<script>" in text
    assert headers["X-Content-Type-Options"] == "nosniff"
    for target in ("/logs/../games.jsonl", "/logs/%2e%2e/games.jsonl", "/logs/ann/%2E%2E/%2e%2e/tournament.json",
                   "/logs/ann/games/..%2f..%2f..%2fgames.jsonl", "/logs/ann/games/evil.log", "/logs/.lock",
                   "/static/..%2f..%2fcli.py", "/games.jsonl", "/tournament.json", "/static/../../tournament.json"):
        code, body = raw(app, target)
        assert code in (403, 404), (target, code)
        assert "root:" not in body and '"game_id"' not in body and '"bots"' not in body, target


def test_every_response_forbids_inline_script(played):
    app = lambda: make_app(LiveState(played))  # noqa: E731 — an app is bound to one event loop
    for path in ("/", "/static/viewer.js", "/api/state", "/logs/nobody/x.log", "/nothing"):
        status, headers, _ = fetch(app, path)
        assert headers["Content-Security-Policy"] == CSP, path
    assert fetch(app, "/favicon.ico")[0] == 204  # an answer without a body goes through the piecewise writing too
    assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP.split("script-src")[1].split(";")[0]
    _, _, page = fetch(app, "/")
    # The page's scripts are files; its one inline script element is data (JSON), which a browser never runs.
    assert '<script src="static/viewer.js"></script>' in page and "<script>" not in page
    assert page.count("<script") == 3 and 'type="application/json"' in page


def test_a_request_naming_another_host_needs_the_token(played):
    # Off loopback (the machine's name), whoever asks: the token or nothing.
    app = lambda: make_app(LiveState(played), "s3cret")  # noqa: E731 — an app is bound to one event loop
    elsewhere = {"Host": "arena.example:8000"}
    for path in ("/", "/?token=wrong", "/events", "/api/state"):
        status, headers, text = fetch(app, path, headers=elsewhere)
        assert status == 403 and "Set-Cookie" not in headers, path
    assert text == "403: this live view needs the access token printed with its address\n"
    assert f"`{text.strip()}`" in " ".join((ROOT / "docs" / "live.md").read_text().split())  # as the docs quote it


def test_the_token_leaves_the_address_for_a_cookie(played):
    app = lambda: make_app(LiveState(played), "s3cret")  # noqa: E731 — an app is bound to one event loop
    elsewhere = {"Host": "arena.example:8000"}

    async def with_the_token():
        async with TestClient(TestServer(app())) as client:
            first = await client.get("/?screen=1&token=s3cret", headers=elsewhere, allow_redirects=False)
            # The cookie carries the token to the page, its scripts and its event stream.
            there = refresh_target(await first.text())
            page = await client.get(there, headers=elsewhere, allow_redirects=False)
            script = await client.get("/static/live.js", headers=elsewhere)
            return first.status, first.headers, there, page.status, await page.text(), script.status
    status, headers, there, then, page, script = asyncio.run(with_the_token())
    assert status == 200 and there == "/?screen=1"
    # "//host/" (or "/\\host") would be another site's address: the page stays on this one.
    for target in ("//evil.example/?token=s3cret", "/\\evil.example/?token=s3cret"):
        code, body = raw(app, target, host="arena.example:8000")
        assert code == 200 and refresh_target(body).startswith("/evil.example/"), target
    cookie = [part.strip() for part in headers["Set-Cookie"].split(";")]
    assert cookie[0] == "arena_token=s3cret" and {"HttpOnly", "Path=/", "SameSite=Strict"} <= set(cookie)
    assert "Secure" not in cookie  # plain HTTP: a browser would never send a Secure cookie back
    assert then == 200 and "static/live.js" in page and "s3cret" not in page and script == 200


def refresh_target(page: str) -> str:
    """Where the page the token's address answers sends the browser (a refresh, not a redirect:
    a SameSite=Strict cookie is not sent on a redirect of another site's navigation)."""
    head = '<!doctype html><meta http-equiv="refresh" content="0; url='
    assert page.startswith(head) and page.endswith('">\n'), page
    return html.unescape(page[len(head):-3])


def test_the_same_users_browser_needs_the_token_when_its_user_cannot_be_told(played, monkeypatch, tmp_path):
    # No table of sockets (another system than Linux): fail closed.
    monkeypatch.setitem(peers.TABLES, 4, tmp_path / "none")
    monkeypatch.setitem(peers.TABLES, 6, tmp_path / "none")
    app = lambda: make_app(LiveState(played), "s3cret")  # noqa: E731 — an app is bound to one event loop
    assert fetch(app, "/")[0] == 403 and fetch(app, "/?token=s3cret")[0] == 200
    assert fetch(lambda: make_app(LiveState(played)), "/")[0] == 403  # no token at all: nobody


_HEADING = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def _row(local: str, remote: str, uid: int, inode: int = 4242, state: str = "01") -> str:
    return f"   0: {local} {remote} {state} 00000000:00000000 00:00000000 00000000 {uid:5d} 0 {inode} 1 0 20 4 30 10 -1\n"


def test_the_peers_user_is_the_owner_of_its_row_in_the_kernels_table(tmp_path):
    tcp, tcp6 = tmp_path / "tcp", tmp_path / "tcp6"
    client, server = "0100007F:D431", "0100007F:1F40"  # 127.0.0.1:54321 -> 127.0.0.1:8000, as a little-endian kernel
    if sys.byteorder == "big":
        client, server = "7F000001:D431", "7F000001:1F40"
    tables = {4: tcp, 6: tcp6}
    peer, local = ("127.0.0.1", 54321), ("127.0.0.1", 8000)
    tcp.write_text(_HEADING + _row(server, client, 0) + _row(client, server, 1000))
    assert peers.peer_uid(peer, local, tables) == 1000  # the client's row, not the server's own
    # A dual-stack server sees an IPv4 client as a mapped address; the client's socket is IPv4 all the same.
    assert peers.peer_uid(("::ffff:127.0.0.1", 54321, 0, 0), ("::ffff:127.0.0.1", 8000, 0, 0), tables) == 1000
    tcp.write_text(_HEADING + _row(client, server, 0, inode=0, state="06"))  # TIME_WAIT, listed as root's
    assert peers.peer_uid(peer, local, tables) is None
    tcp.write_text(_HEADING + _row(client, server, 1000) + _row(client, server, 1001))
    assert peers.peer_uid(peer, local, tables) is None  # two owners: no answer
    tcp.write_text(_HEADING + _row(client, server, 1000))
    assert peers.peer_uid(("10.1.2.3", 54321), ("10.1.2.4", 8000), tables) is None  # not loopback: not asked
    assert peers.peer_uid(peer, local, {4: tmp_path / "none", 6: tcp6}) is None  # no table: no answer
    six = "".join("00000000" for _ in range(3)) + ("01000000" if sys.byteorder == "little" else "00000001")
    tcp6.write_text(_HEADING + _row(f"{six}:D431", f"{six}:1F40", 1000))
    assert peers.peer_uid(("::1", 54321, 0, 0), ("::1", 8000, 0, 0), tables) == 1000


def _get(host: str, port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """GET ``path`` of the server at ``host:port``, as written: status, headers, body."""
    shown = f"[{host}]" if ":" in host else host
    lines = [f"GET {path} HTTP/1.1", f"Host: {shown}:{port}", "Connection: close",
             *(f"{name}: {value}" for name, value in (headers or {}).items())]
    # The address as bytes: no codec to load, which a client of another user could not read from root's Python.
    with socket.create_connection((host.encode(), port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = _read_all(sock).decode(errors="replace")
    head, _, body = data.partition("\r\n\r\n")
    status, *fields = head.split("\r\n")
    return int(status.split()[1]), dict(field.split(": ", 1) for field in fields), body


def _as_nobody(call: Callable[[], Any]) -> Any:
    """``call()`` in a child process that is the user ``nobody`` (JSON back through a pipe)."""
    if os.geteuid() != 0:
        pytest.skip("only root can make a client of another user here (CI runs as root)")
    nobody = pwd.getpwnam("nobody")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest, no return
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.write(write, json.dumps([os.getuid(), call()]).encode())
        except BaseException as exc:  # noqa: BLE001 — said to the parent, which fails the test with it
            os.write(write, json.dumps([None, repr(exc)]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        uid, result = json.loads(answer.read())
    os.waitpid(pid, 0)
    assert uid is not None, f"the client as nobody failed: {result}"
    assert uid == nobody.pw_uid != os.geteuid()
    return result


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_another_user_on_this_machine_needs_the_token_on_loopback(played, tmp_path, host):
    log = f"/logs/ann/games/{_a_game_log_name(played)}"
    server = _Server(played, tmp_path / "err", host=host)
    try:
        def another_user() -> list[Any]:
            refused = [_get(host, server.port, path)[::2] for path in ("/", "/events", "/api/state", log)]
            first = _get(host, server.port, f"/?token={server.token}")
            cookie = first[1]["Set-Cookie"].split(";")[0]
            return [refused, first[0], refresh_target(first[2]), _get(host, server.port, "/", {"Cookie": cookie})[0]]

        refused, redirected, location, with_cookie = _as_nobody(another_user)
        mine = [_get(host, server.port, path)[0] for path in ("/", "/api/state", log)]
    finally:
        server.close()
    forbidden = "403: this live view needs the access token printed with its address\n"
    assert refused == [[403, forbidden]] * 4
    assert (redirected, location, with_cookie) == (200, "/", 200)
    assert mine == [200, 200, 200]


def _a_game_log_name(directory: Path) -> str:
    return next(log.name for log in sorted((directory / "logs" / "ann" / "games").glob("r*.log"))
                if not log.is_symlink())


def test_a_team_server_shows_that_team_alone(played):
    app = lambda: make_app(LiveState(played, bot="ann"))  # noqa: E731 — an app is bound to one event loop
    bob_log = next((played / "logs" / "bob" / "games").glob("*.log"))
    assert fetch(app, f"/logs/bob/games/{bob_log.name}")[0] == 403
    status, _, page = fetch(app, "/")
    data = json.loads(page.split('id="report-data">')[1].split("</script>")[0])
    assert status == 200 and data["only_bot"] == "ann"
    shown = [t for g in data["games"] for seat, t in enumerate(g.get("e", [])) if t is not None]
    seats = [data["bots"][g["p"][seat]] for g in data["games"] for seat, t in enumerate(g.get("e", [])) if t is not None]
    assert shown and set(seats) == {"ann"}


def test_a_large_pages_games_are_served_in_files_by_the_rules_of_the_others(played):
    app = lambda: make_app(LiveState(played, inline_games=0))  # noqa: E731 — an app is bound to one event loop
    _, _, page = fetch(app, "/")
    data = json.loads(page.split('id="report-data">')[1].split("</script>")[0])
    assert "games" not in data and data["chunks"]["href"] == "games/" and data["chunks"]["starts"] == [0]
    name = data["chunks"]["names"][0]
    status, headers, script = fetch(app, f"/games/{name}")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert headers["Content-Security-Policy"] == CSP and headers["X-Content-Type-Options"] == "nosniff"
    body = json.loads(script.removeprefix("arenaReport.games(").removesuffix(");\n"))
    assert body["name"] == name and len(body["games"]) == 4
    lines = [json.loads(line) for line in (played / "games.jsonl").read_text().splitlines()]
    assert sorted(g["m"] for g in body["games"]) == sorted(",".join(m["move"] for m in r["moves"]) for r in lines)
    other = f"0000-{'0' * 16}.js"  # a file of another page (or none): not made
    for target in (f"/games/{other}", "/games/0000.js", "/games/..%2fgames.jsonl", "/games/", f"/games/{name}x"):
        code, text = raw(app, target)
        assert code in (403, 404) and '"game_id"' not in text, target
    assert raw(app, f"/games/{name}", host="evil.example:8000")[0] == 403
    guarded = lambda: make_app(LiveState(played, inline_games=0), "s3cret")  # noqa: E731
    elsewhere = {"Host": "arena.example:8000"}
    assert fetch(guarded, f"/games/{name}", headers=elsewhere)[0] == 403
    assert fetch(guarded, f"/games/{name}", headers={**elsewhere, "Cookie": "arena_token=s3cret"})[0] == 200


def test_the_status_line_says_finished_stopped_or_running(played, tmp_path):
    state = LiveState(played)
    assert state.status().state == "finished" and state.status().line == "finished: 4 games played"
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "games.jsonl").write_text((played / "games.jsonl").read_text().splitlines(keepends=True)[0])
    for name in ("tournament.json",):
        (cut / name).write_text((played / name).read_text())
    assert LiveState(cut).status().line == "stopped: 1 of 4 games played (run it again to resume)"
    with open(cut / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        assert current_run(cut).pid == os.getpid()
        assert LiveState(cut).status().line.startswith("running: 1 of 4 games played")
    assert current_run(cut) is None


def test_the_status_line_of_a_run_says_the_time_where_it_runs_not_utc(played, monkeypatch, tmp_path):
    for name in ("games.jsonl", "tournament.json"):
        (tmp_path / name).write_bytes((played / name).read_bytes())
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+5:30 all year: no minute of UTC reads the same
    time.tzset()
    try:
        with open(tmp_path / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock.write(f"{os.getpid()}\n")
            lock.flush()
            before = time.strftime("%H:%M")
            line = LiveState(tmp_path).status().line
            after = time.strftime("%H:%M")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert any(f"updated {local}:" in line for local in (before, after)) and line.endswith(" IST"), line


def test_the_status_of_results_without_an_sprt_folds_no_game(played, monkeypatch):
    from arena.results.reading import ReadResults

    folded = []
    monkeypatch.setattr(ReadResults, "standings", lambda self, **asked: folded.append(asked))
    monkeypatch.setattr("arena.live.state.champion_of", lambda results: None)  # (it ranks the finished run's bots)
    assert LiveState(played).status().line == "finished: 4 games played" and folded == []


def test_a_running_matchs_count_is_the_one_the_match_said(tmp_path):
    """An SPRT match plays round after round of its openings, at most the cap
    it announced: the page counts against that cap, not the rounds played so far."""
    ran = arena("match", "python -m bots.greedy", "python -m bots.random_bot", "--sprt", "elo0=0,elo1=100",
                "--openings", "plies=4,count=10", "--tc", "5+0.05", "--seed", "3", "-o", tmp_path / "m")
    assert ran.exit_code == 0, ran.err
    cap = int(re.search(r"until decided, at most (\d+) games", ran.out + ran.err)[1])
    played = len((tmp_path / "m" / "games.jsonl").read_text().splitlines())
    assert played < cap
    with open(tmp_path / "m" / ".lock", "w") as lock:  # as while the match runs
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        assert LiveState(tmp_path / "m").status().line.startswith(f"running: {played} of {cap} games played")


def test_a_directory_without_results_yet_is_waited_for(tmp_path):
    state = LiveState(tmp_path)
    assert state.status().state == "waiting"
    assert "No games played yet" in state.page().decode()


# -- the page's changes ----------------------------------------------------------------------


def _made(before: str, steps: list) -> str:
    """The text ``steps`` make of ``before``, as live.js makes it: positions in UTF-16 code units."""
    units = before.encode("utf-16-le")
    return "".join(step if isinstance(step, str) else units[2 * step[0]:2 * step[1]].decode("utf-16-le")
                   for step in steps)


def test_a_change_is_the_new_pieces_and_where_the_others_were():
    rows = [f"<tr><td>b{i} 🤖</td><td>{i}</td></tr>" for i in range(50)]
    before = "<table>" + "".join(rows) + '</table><script>{"g":[{"a":1},{"b":2}]}</script>'
    rows[3], rows[40] = rows[40], rows[3]  # two bots change places
    after = "<table>" + "".join(rows[:10]) + "<tr><td>new é</td></tr>" + "".join(rows[10:]) + \
        '</table><script>{"g":[{"a":1},{"b":2},{"c":3}]}</script>'
    steps = delta.recipe(delta.pieces(before), delta.pieces(after))
    assert "".join(delta.pieces(after)) == after and _made(before, steps) == after
    sent = [step for step in steps if isinstance(step, str)]
    # The moved rows are copies; only what the old text never held is sent.
    assert sent == ["<tr><td>new é</td>", '{"b":2},{"c":3}]}</script>']
    assert len(json.dumps(steps)) < len(after) / 4


def test_the_page_loaded_says_which_results_it_shows(played):
    # The script learns from the page it came with which results it shows: a game stored
    # between the page's load and the stream's first state is fetched, not taken as shown.
    state = LiveState(played)
    app = lambda: make_app(state, "s3cret")  # noqa: E731 — an app is bound to one event loop
    cookie = {"Cookie": "arena_token=s3cret"}
    _, headers, loaded = fetch(app, "/", headers=cookie)
    # The page's own count, read with it (the app's poller may read the results again meanwhile).
    assert f'<meta name="arena-results" content="{headers["X-Arena-Results"]}">' in loaded
    assert int(headers["X-Arena-Results"]) in (state.generation - 1, state.generation)
    # The page fetched by the script is the text the changes apply to, as the server keeps it.
    assert fetch(app, "/page", headers=cookie)[2] == state.page().decode()
    script = (ROOT / "arena" / "live" / "live.js").read_text()
    assert 'meta[name="arena-results"]' in script


def test_a_stored_game_changes_the_page_by_a_few_pieces(played, tmp_path):
    directory = tmp_path / "growing"
    copy_results(played, directory)
    lines = (directory / "games.jsonl").read_bytes().splitlines(keepends=True)
    (directory / "games.jsonl").write_bytes(b"".join(lines[:-1]))
    state = LiveState(directory)
    before = state.page().decode()
    assert state.page_change() is None  # no page before the first: nothing to change
    with open(directory / "games.jsonl", "ab") as log:
        log.write(lines[-1])
    state.refresh()
    change = state.page_change()
    after = state.page().decode()
    assert change is not None and (change["from"], change["to"]) == (1, 2) == (1, state.generation)
    assert _made(before, change["steps"]) == after and len(json.dumps(change)) < len(after) / 3
    assert state.page_change() is None  # told once


# -- many event streams during a run --------------------------------------------------------


def test_fifty_event_streams_are_served_while_a_tournament_runs(tmp_path):
    file = slow_file(tmp_path, 0.03, ("ann", "bob"))
    state = LiveState(file)
    ready: list[str] = []
    stop = threading.Event()
    server = threading.Thread(target=serve, args=(state, "127.0.0.1", 0), kwargs={"on_ready": ready.append, "stop": stop})
    server.start()
    try:
        url = until(lambda: ready)[0].partition("?")[0]  # the same user's streams: no token needed
        run = subprocess.Popen([sys.executable, "-m", "arena", "run", str(file)], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})

        async def stream(session: ClientSession) -> list[dict]:
            seen, name = [], ""
            async with session.get(url + "events") as response:
                assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
                async for line in response.content:
                    if line.startswith(b"event: "):
                        name = line[7:].decode().strip()
                    elif line.startswith(b"data: ") and name == "state":
                        seen.append(json.loads(line[6:]))
                        if seen[-1]["status"]["state"] == "finished":
                            return seen
            return seen

        async def all_streams():
            async with ClientSession(timeout=ClientTimeout(total=90)) as session:
                return await asyncio.gather(*(stream(session) for _ in range(50)))

        streams = asyncio.run(all_streams())
        assert run.wait(60) == 0, run.stderr.read().decode()
    finally:
        stop.set()
        server.join(10)
    assert len(streams) == 50
    for seen in streams:
        assert seen[-1]["status"]["line"] == "finished: 4 games played"
        assert any(event["live"] for event in seen), "no game in progress reached this stream"
        plies = [len(g["moves"]) for event in seen for g in event["live"]]
        assert max(plies) >= 3  # boards moving, not just games starting


def test_a_feed_writes_through_no_link_planted_at_its_files(tmp_path):
    live = tmp_path / LIVE_DIR
    live.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.link(victim, live / ".w1.json.tmp")  # hard links at its temporary name and at its name
    os.link(victim, live / "w1.json")
    feed = LiveFeed(live, "w1", interval_s=0.01)
    feed.move(referee_for())
    until(lambda: read_live_games(tmp_path))
    assert victim.read_text() == "keep me"


# -- the commands' errors: one line, and a run goes on without its server ------------------------


def test_serve_names_what_it_cannot_do_in_one_line(played, tmp_path):
    assert_one_line_error(arena("serve", tmp_path / "nothing"), "no such file or directory")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert_one_line_error(arena("serve", played, "--port", port), f"cannot listen on 127.0.0.1:{port}")
    assert_one_line_error(arena("match", "python -m bots.random_bot", "python -m bots.random_bot", "--serve", "8000"),
                          "--serve", "--output")
    assert_one_line_error(arena("serve", played, "--bot", "nobody"), "no bot 'nobody'", "ann, bob")


def test_a_run_goes_on_when_its_server_cannot_listen(tmp_path):
    file = slow_file(tmp_path, 0.0, ("ann", "bob"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = subprocess.run([sys.executable, "-m", "arena", "run", str(file), "--serve", str(port)], cwd=ROOT,
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert ran.returncode == 0, ran.stderr
    # Said before any address: no address of a server that never listened is printed.
    assert f"error: live view: cannot listen on 127.0.0.1:{port}" in ran.stderr
    assert "http://" not in ran.stderr
    assert "4 games played, 0 resumed" in ran.stderr


def test_a_forged_results_directory_is_served_with_the_reason_it_cannot_be_read(played, tmp_path):
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "games.jsonl").symlink_to(played / "games.jsonl")
    app = lambda: make_app(LiveState(forged))  # noqa: E731 — an app is bound to one event loop
    status, _, page = fetch(app, "/")
    assert status == 200 and "cannot read the results" in page and "symbolic link" in page
    status, _, text = fetch(app, "/api/state")
    assert status == 200 and json.loads(text)["status"]["state"] == "problem"


def test_the_end_of_a_run_is_told_at_once_whatever_the_pause_between_readings(played, tmp_path):
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (played / "games.jsonl").read_text().splitlines(keepends=True)
    (cut / "games.jsonl").write_text("".join(lines[:3]))
    (cut / "tournament.json").write_text((played / "tournament.json").read_text())
    lock = open(cut / ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    async def go() -> tuple[bytes, bytes]:
        hub = Hub(LiveState(cut))
        await hub.poll()
        running = hub.current
        with open(cut / "games.jsonl", "a") as games:  # the last game, and the run ends: within the pause
            games.write(lines[3])
        lock.close()
        await hub.poll()
        hub.close()
        return running, hub.current

    running, after = asyncio.run(go())
    assert b'"state":"running"' in running and b'"line":"finished: 4 games played"' in after


def test_only_the_games_of_the_run_holding_the_directory_are_in_progress(played, tmp_path):
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "games.jsonl").write_text((played / "games.jsonl").read_text().splitlines(keepends=True)[0])
    (cut / "tournament.json").write_text((played / "tournament.json").read_text())
    for slot, game_id in (("w1", "r7-ann~bob-g1"), ("w2", "r7-ann~bob-g2")):
        feed = LiveFeed(cut / LIVE_DIR, slot, interval_s=0.01)
        feed.move(referee_for(game_id))
    until(lambda: len(read_live_games(cut)) == 2)
    hour_ago = time.time() - 3600
    os.utime(cut / LIVE_DIR / "w2.json", (hour_ago, hour_ago))  # left by a run before this one
    assert LiveState(cut).live_games() == []  # no run holds the directory: nothing is in progress
    with open(cut / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        minute_ago = time.time() - 60
        os.utime(cut / ".lock", (minute_ago, minute_ago))  # when the run took the lock
        assert [g["id"] for g in LiveState(cut).live_games()] == ["r7-ann~bob-g1"]


def test_a_stream_that_goes_away_is_forgotten_and_the_others_go_on(played):
    state = LiveState(played)

    async def go() -> tuple[int, bytes]:
        app = make_app(state, poll_s=0.01)
        async with TestClient(TestServer(app)) as client:
            hub = next(value for value in app.values() if hasattr(value, "hub")).hub
            gone = await client.get("/events")
            await gone.content.readuntil(b"\n\n")  # retry:
            await gone.content.readuntil(b"\n\n")  # the first state
            gone.close()
            staying = await client.get("/events")
            await staying.content.readuntil(b"\n\n")
            first = await staying.content.readuntil(b"\n\n")
            for _ in range(200):  # events to every stream: writing to the one gone ends its handler
                if len(hub.streams) == 1:
                    break
                hub.broadcast(hub.current)
                await asyncio.sleep(0.01)
            return len(hub.streams), first

    streams, first = asyncio.run(go())
    assert streams == 1 and first.startswith(b"event: state\ndata: ")


# -- the server's bounds: each attack of the security review (issue 40), bounded, on loopback -------------

_SERVER = """
import json, sys
from pathlib import Path
from arena.run.connection_limits import Limits
from arena.live.server import serve
from arena.live.state import LiveState
serve(LiveState(Path(sys.argv[1])), sys.argv[3], 0, on_ready=lambda url: print(url, flush=True),
      limits=Limits(**json.loads(sys.argv[2])))
"""


class _Server:
    """A live server in a process of its own (its memory and descriptors measured alone), with ``limits``."""

    def __init__(self, directory: Path, stderr: Path, host: str = "127.0.0.1", **limits: float) -> None:
        self.stderr = stderr
        self.host = host
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, str(directory), json.dumps(limits), host],
                                        cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr.open("wb"),
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert self.process.stdout is not None
        url = self.process.stdout.readline().decode().strip()
        shown = f"[{host}]" if ":" in host else host
        assert url.startswith(f"http://{shown}:") and "/?token=" in url, stderr.read_text()
        address, _, self.token = url.partition("/?token=")
        self.port = int(address.rsplit(":", 1)[1])

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def connect(self, source: str = "127.0.0.1", rcvbuf: int | None = None) -> socket.socket:
        sock = socket.socket()
        if rcvbuf is not None:  # set before connecting: a client that reads nothing takes little
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.bind((source, 0))
        sock.settimeout(5)
        sock.connect(("127.0.0.1", self.port))
        return sock

    def get(self, path: str, source: str = "127.0.0.1", host: str = "127.0.0.1") -> tuple[int, bytes]:
        with self.connect(source) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            data = _read_all(sock)
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


@pytest.fixture
def big_log(played, tmp_path) -> tuple[Path, str]:
    """A copy of ``played`` whose first log holds 4 MiB (the most a bot's stderr fills), and that log's path."""
    directory = tmp_path / "big"
    copy_results(played, directory)
    log = _a_game_log(directory)
    log.write_bytes(b"x" * (live_server.MAX_LOG_BYTES - 1) + b"\n")
    return directory, f"/logs/ann/games/{log.name}"


def _a_game_log(directory: Path) -> Path:
    """A log of a game ``directory`` holds, made anew: a test before planted a link among them, never written through."""
    log = directory / "logs" / "ann" / "games" / _a_game_log_name(directory)
    log.unlink()
    return log


def test_two_hundred_slow_readers_of_a_big_log_hold_little_of_the_servers_memory(big_log, tmp_path):
    directory, path = big_log
    server = _Server(directory, tmp_path / "err")
    try:
        assert server.get(path)[1] == (directory / path.lstrip("/")).read_bytes()  # served whole to a reader
        assert server.get("/")[0] == 200  # (the results read once, with what that imports: the server at rest)
        idle = server.rss_mib()
        readers = []
        for n in range(200):  # four addresses: none beyond its share of connections
            sock = server.connect(f"127.0.0.{1 + n % 4}", rcvbuf=4096)
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            readers.append(sock)
        time.sleep(2)  # the server writes what the clients' sockets take, and holds the rest
        held = server.rss_mib()
        status, body = server.get(path, source="127.0.0.5")  # a reader is served meanwhile
        for sock in readers:
            sock.close()
        deadline = time.monotonic() + 20  # (a loaded machine: the server lets them go as it gets the CPU)
        while (after := server.rss_mib()) >= idle + 20 and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        server.close()
    assert status == 200 and len(body) == live_server.MAX_LOG_BYTES
    assert held < idle + 100, (idle, held)
    assert after < idle + 20, (idle, held, after)


def test_a_client_that_stops_reading_is_let_go_after_the_write_timeout(big_log, tmp_path):
    directory, path = big_log
    server = _Server(directory, tmp_path / "err", write_timeout_s=0.5)
    try:
        sock = server.connect(rcvbuf=4096)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        time.sleep(2)
        started = time.monotonic()
        received = _read_all(sock)  # what was in flight, then the end: the server let it go
        sock.close()
    finally:
        server.close()
    assert len(received) < live_server.MAX_LOG_BYTES and time.monotonic() - started < 3


def test_connections_are_capped_in_all_and_per_address(played, tmp_path):
    server = _Server(played, tmp_path / "err", connections=6, per_address=3, header_timeout_s=30)
    try:
        held = [server.connect("127.0.0.1") for _ in range(3)]
        per_address = server.get("/api/state", "127.0.0.1")[0]
        other = server.get("/api/state", "127.0.0.2")[0]
        held += [server.connect("127.0.0.2") for _ in range(3)]
        in_all = server.get("/api/state", "127.0.0.3")[0]
        held.pop(0).close()
        freed = until(lambda: server.get("/api/state", "127.0.0.1")[0] == 200, what="a freed connection served")
        for sock in held:
            sock.close()
    finally:
        server.close()
    assert (per_address, other, in_all, freed) == (503, 200, 503, True)


def _open(sock: socket.socket) -> bool:
    """Whether ``sock`` is still open: what the server sends read until it has been quiet for half a second."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            if not sock.recv(1 << 16):
                return False
    except TimeoutError:
        return True
    return True  # (streaming still: open)


def _answered(sock: socket.socket) -> bool:
    """Whether the server has begun to answer on ``sock`` (read without taking it)."""
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


def test_a_new_client_takes_the_place_of_the_oldest_event_stream(played, tmp_path):
    server = _Server(played, tmp_path / "err", per_address=3)
    try:
        streams = []
        for _ in range(3):  # streams that read nothing hold every connection of this address
            sock = server.connect(rcvbuf=4096)
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            streams.append(sock)
        until(lambda: all(map(_answered, streams)), 10, "the streams' first events")  # all three held before the fourth
        status = server.get("/api/state")[0]
        oldest = _read_all(streams[0])  # closed: its events, then the end
        assert _open(streams[1]) and _open(streams[2])  # the others still open
        for sock in streams:
            sock.close()
    finally:
        server.close()
    assert status == 200 and oldest.startswith(b"HTTP/1.1 200")


def test_half_sent_requests_are_closed_by_the_header_timeout(played, tmp_path):
    server = _Server(played, tmp_path / "err", header_timeout_s=0.5)
    try:
        idle = server.descriptors()
        slow = [server.connect() for _ in range(60)]  # within the connections of one address
        for sock in slow:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: b")
        time.sleep(0.2)
        during = server.descriptors()
        closed = [_read_all(sock) for sock in slow]  # each ends within the timeout (5 s at most here)
        after = until(lambda: server.descriptors() <= idle + 3 and server.descriptors())
        for sock in slow:
            sock.close()
    finally:
        server.close()
    # A few descriptors come and go as the server reads the results: the margin.
    assert during >= idle + 55 and closed == [b""] * 60 and after <= idle + 3, (idle, during, after)


def test_malformed_requests_print_no_traceback_and_an_unparseable_host_is_a_400(played, tmp_path):
    server = _Server(played, tmp_path / "err")
    requests = [b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                b"G\x00T / HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                b"GET / HTTP/1.1\r\n" + b"X: " + b"y" * 10_000 + b"\r\n\r\n"] * 5
    try:
        for request in requests:
            with server.connect() as sock:
                sock.sendall(request)
                _read_all(sock)
        status, body = server.get("/api/state", host="localhost:1:x")
    finally:
        server.close()
    assert status == 400 and body.count(b"\n") == 1
    assert (tmp_path / "err").read_text() == ""


def test_a_live_file_nested_deep_is_skipped_and_the_state_still_served(played, tmp_path):
    (played / LIVE_DIR).mkdir(exist_ok=True)
    deep = played / LIVE_DIR / "w9.json"
    deep.write_text("[" * 8000 + "]" * 8000)  # 16 KB: within the size read
    try:
        with open(played / ".lock", "w") as lock:  # a run holds the directory: its live files are read
            fcntl.flock(lock, fcntl.LOCK_EX)
            assert read_live_games(played) == []
            status, _, text = fetch(lambda: make_app(LiveState(played)), "/api/state")
    finally:
        deep.unlink()
    assert status == 200 and json.loads(text)["live"] == []


def test_a_log_too_big_to_show_says_its_size_and_where_it_is(played, tmp_path):
    directory = tmp_path / "big"
    copy_results(played, directory)
    log = _a_game_log(directory)
    with open(log, "xb") as handle:
        handle.truncate(5 << 20)  # sparse: 5 MiB claimed
    status, _, text = fetch(lambda: make_app(LiveState(directory)), f"/logs/ann/games/{log.name}")
    assert status == 403 and text == f"403: too big to show (5.0 MiB); it is in logs/ann/games/{log.name}\n"


def test_the_security_page_states_the_live_servers_bounds_as_the_code_has_them():
    from arena.run import connection_limits as limits
    from arena.results.live_feed import MAX_LIVE_BYTES

    page = (ROOT / "docs" / "security.md").read_text().split("### The live server's bounds")[1].split("\n\n", 3)[2]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1] for line in page.splitlines()[2:]}
    assert rows["connections in all"] == str(limits.MAX_CONNECTIONS)
    assert rows["connections from one address"] == str(limits.MAX_PER_ADDRESS)
    assert rows["time from a connection (or its last answer) to a whole request head"] == f"{limits.HEADER_TIMEOUT_S:g} s"
    assert rows["time a kept-alive connection waits for its next request"] == f"{limits.IDLE_TIMEOUT_S:g} s"
    assert rows["time a client may take to accept one piece of an answer"] == f"{limits.WRITE_TIMEOUT_S:g} s"
    kib = limits.SEND_BUFFER_BYTES >> 10
    assert rows["bytes of an answer waiting for one client"] == f"{kib} KiB in the server, {kib} KiB in its socket"
    assert rows["bytes of a file or page read per piece"] == f"{limits.CHUNK_BYTES >> 10} KiB"
    assert rows["a bot's log shown"] == f"{live_server.MAX_LOG_BYTES >> 20} MiB"
    assert rows["a live file read (`live/*.json`)"].startswith(f"{MAX_LIVE_BYTES >> 10} KiB")
