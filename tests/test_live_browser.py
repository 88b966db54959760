"""The live view in real headless Chromium (the ``browser`` fixture of
conftest.py), while ``arena run FILE --serve PORT`` plays a knockout of slow
bots: a game's board changes move by move, the standings change when a game
ends, the bracket fills in, the "finished" line appears, and nothing goes to
the console.  Then a team's server (``--bot``) shows that bot's stderr, which
holds ``<script>``, as text.

Screenshots go to ``$LIVE_SCREENSHOTS`` when set (docs/img/ took them from there)."""

from __future__ import annotations

import functools
import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from arena.live.server import serve
from arena.live.state import LiveState
from arena.results.report import INLINE_GAMES
from builders import BOTS, ROOT, arena, tournament_file
from builders import until as _until

#: A browser is asked less often than a file is looked at.
until = functools.partial(_until, every=0.05)

pytestmark = pytest.mark.timeout(180)

SLOW = f"[python, {BOTS / 'slow_random.py'}, '0.1']"
#: The same bots, which hold the final (round 2) from its fifth ply until the folder ``{gates}`` has a file
#: ``all``: the test makes it once a big screen has the final in view, however quickly the semi-finals went.
HELD_FINAL = f"[python, {BOTS / 'slow_random.py'}, '0.1', '0.1', '{{gates}}', r2-]"
#: The final's clocks run while it is held: time enough to open a page.
HELD_CLOCK = "30+0.1"
PLAYERS = ("ann", "bob", "cy", "dan")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def shot(browser, name: str) -> None:
    directory = os.environ.get("LIVE_SCREENSHOTS")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(directory) / name))


def console_errors(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def test_a_running_knockout_seen_live(browser, tmp_path):
    gates = tmp_path / "gates"
    gates.mkdir()
    file = tournament_file(tmp_path, PLAYERS, "format: knockout\ntiebreak_pairs: 1\n",
                           cmds={b: HELD_FINAL.format(gates=gates) for b in PLAYERS}, cwd=None, concurrency=2, rounds=None,
                           time_control=HELD_CLOCK)
    port = free_port()
    run = subprocess.Popen([sys.executable, "-m", "arena", "run", str(file), "--serve", str(port)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    desk = browser.current_window_handle
    try:
        url = f"http://127.0.0.1:{port}/"
        until(lambda: _answers(port) or run.poll() is not None, 30, "the server answers")
        assert run.poll() is None, run.stderr.read().decode()
        browser.get(url)
        # Every position the page draws of each game, in order; the slots its card took; when it was
        # first seen finished (its ply and result) and when its card left.
        browser.execute_script("""
            window.shown = {}; window.slots = {}; window.finished = {}; window.titles = new Set();
            new MutationObserver(() => {
              const now = performance.now(), present = new Set();
              document.querySelectorAll("article.live-game").forEach((card) => {
                const id = card.dataset.game;
                present.add(id);
                window.titles.add(card.querySelector("h3").textContent);
                const plies = window.shown[id] = window.shown[id] || [];
                if (plies[plies.length - 1] !== Number(card.dataset.ply)) plies.push(Number(card.dataset.ply));
                (window.slots[id] = window.slots[id] || []).includes(card.dataset.slot) || window.slots[id].push(card.dataset.slot);
                if (card.classList.contains("finished") && !window.finished[id]) {
                  window.finished[id] = { ply: Number(card.dataset.ply), result: card.querySelector(".live-result").textContent,
                                          from: now, to: null };
                }
              });
              Object.entries(window.finished).forEach(([id, f]) => { if (f.to === null && !present.has(id)) f.to = now; });
            }).observe(document.body, { childList: true, subtree: true, characterData: true });""")
        # A game in progress, its board changing move by move.
        seen: dict[str, tuple[int, str]] = {}

        def a_move() -> tuple[tuple[int, str], tuple[str, int, str, list[str]]] | None:
            now = _live_game(browser)
            if now is None:
                return None
            before = seen.get(now[0])
            seen[now[0]] = (now[1], now[2])
            return (before, now) if before is not None and now[1] > before[0] else None

        (ply, board), (_, later_ply, later_board, clocks) = until(a_move, 30, "a game in progress making a move")
        assert later_board != board, "the board did not change with the move"
        assert len(clocks) == 2 and all(":" in clock for clock in clocks)
        # The side to move's clock runs down between two states of its game.
        until(lambda: _clock_runs_down(browser), 30, "a clock running down while its bot thinks")
        until(lambda: browser.execute_script("return Object.keys(window.finished).length > 0"), 60, "a finished game's card")
        shot(browser, "live-finished.png")
        # The standings change when a game ends; the bracket fills in.
        standings = _standings(browser)
        pending = _pending_matches(browser)
        until(lambda: _standings(browser) != standings, 60, "the standings change")
        shot(browser, "live.png")
        # A big screen, opened while the final is held in progress: the server beside the run stops a
        # moment after the run ends, too soon for a page opened then.
        browser.switch_to.new_window("window")
        big = browser.current_window_handle
        browser.set_window_size(1920, 1080)
        browser.get(url + "?screen=1")
        until(lambda: browser.execute_script("""return Array.from(document.querySelectorAll("article.live-game h3"))
                                                    .some((h3) => h3.textContent.startsWith("Final, "));"""),
              30, "the final in progress on the big screen")
        (gates / "all").touch()
        browser.switch_to.window(desk)
        until(lambda: _text(browser, "#status").startswith("finished: "), 120, "the finished line")
        # The page with the last game follows the status line (it is fetched once the line says the run ended).
        until(lambda: browser.find_elements("css selector", ".ko-round.champion .bot.winner"), 30, "the champion")
        assert _pending_matches(browser) < pending or pending == 0
        records = {json.loads(line)["game_id"]: json.loads(line) for line in (tmp_path / "out" / "games.jsonl").open()}
        finished = browser.execute_script("return window.finished")
        # Every game seen in progress is seen finished (a game recorded before the server's first look is not held).
        assert set(browser.execute_script("return window.shown")) <= set(finished), finished
        for game_id, seen in finished.items():
            record = records[game_id]
            # The final position is the record's, every move of it, with its result, for the hold (10 s).
            assert seen["ply"] == len(record["moves"]), (game_id, seen)
            assert f"wins by {record['reason']}" in seen["result"] or seen["result"].startswith("draw by")
            # Sixteen slots: none was needed, so each card left when its hold was over, not before.
            assert seen["to"] is None or seen["to"] - seen["from"] >= 9000, (game_id, seen)
        # Cards say what their game is: a knockout of 4 has semi-finals and a final.
        titles = browser.execute_script("return Array.from(window.titles)")
        assert all(re.fullmatch(r"(Semi-final [12]|Final), game \d+(, tie-break pair \d+)? · \w+ ([\d½]+–[\d½]+|–) \w+( · finished)?",
                                t) for t in titles), titles
        assert any(t.startswith("Final, ") for t in titles) and any(t.startswith("Semi-final 1, ") for t in titles), titles
        # A card keeps its slot while its game lasts, and while it is held.
        slots = browser.execute_script("return window.slots")
        assert slots and all(len(taken) == 1 for taken in slots.values()), slots
        # Bots of 0.1 s a move; a worker publishes every 0.2 s, the server looks every 0.25 s:
        # a game of some 25 plies is drawn in several positions, each later than the one before.
        shown = browser.execute_script("return window.shown")
        longest = max(shown.values(), key=len)
        assert len(longest) >= 4 and longest == sorted(longest), shown
        browser.switch_to.window(big)
        until(lambda: _text(browser, "#status").startswith("finished: "), 30, "the finished line on the big screen")
        until(lambda: browser.find_elements("css selector", "body.screen"), 10, "big-screen mode")
        assert not browser.find_element("id", "games").is_displayed()
        assert browser.find_element("css selector", ".bracket").is_displayed()
        # The ranking as read from afar: place, bot, score, rating (and Elo), whole, no scrolling.
        shown_headers, overflow = browser.execute_script("""
            const table = document.querySelector("#standings table.data");
            return [Array.from(table.querySelectorAll("thead th")).filter((th) => th.offsetParent !== null)
                      .map((th) => th.textContent.trim()),
                    table.scrollWidth - table.parentElement.clientWidth];""")
        assert shown_headers == ["#", "bot", "rating", "score", "Elo"], shown_headers
        assert overflow <= 1
        # The other tables are for a desk (read in one go: the page may swap its parts in meanwhile).
        assert browser.execute_script("""
            const others = document.querySelectorAll("#standings > .scroll ~ .scroll, #standings > .scroll ~ h3:has(+ .scroll)");
            return others.length > 0 && Array.from(others).every((e) => e.offsetParent === null);""")
        shot(browser, "live-screen-held.png")
        # The server beside the run stops a moment after the run ends: the stream's attempts to reconnect
        # may fail meanwhile (the page says so in red), nothing else may.
        gone = "/events - Failed to load resource: net::ERR_CONNECTION_REFUSED"
        assert [error for error in console_errors(browser) if gone not in error] == []
        # The last games' cards leave once held long enough, by the page's own clock (the server goes meanwhile).
        until(lambda: browser.find_element("id", "live-none").is_displayed(), 20, "no game in progress")
    finally:
        (gates / "all").touch()  # (after a failure too: no bot is left waiting)
        for handle in set(browser.window_handles) - {desk}:  # the big screen's window
            browser.switch_to.window(handle)
            browser.close()
        browser.switch_to.window(desk)
        browser.set_window_size(1200, 900)
        browser.get("about:blank")  # the page would try to reconnect to a server that is gone
        try:
            code = run.wait(30)
        except subprocess.TimeoutExpired:
            run.terminate()
            code = run.wait(30)
    assert code == 0, run.stderr.read().decode()


@pytest.mark.parametrize("inline_games", [INLINE_GAMES, 0], ids=["one-page", "games-served-in-files"])
def test_a_team_page_shows_its_stderr_as_text(browser, tmp_path, inline_games):
    file = tournament_file(tmp_path, ("ann", "bob"), cmds={"ann": SLOW.replace("0.06", "0"), "bob": SLOW.replace("0.06", "0")},
                           cwd=None, rounds=1)
    assert arena("run", file).exit_code == 0  # (in this process: what is watched is its results)
    ready: list[str] = []
    stop = threading.Event()
    server = threading.Thread(target=serve, args=(LiveState(tmp_path / "out", bot="ann", inline_games=inline_games),
                                                  "127.0.0.1", 0),
                              kwargs={"on_ready": ready.append, "stop": stop})
    server.start()
    console_errors(browser)  # another test's, read and dropped
    try:
        url = until(lambda: ready, 10, "the server")[0]
        browser.get(url)  # as printed, with the token: which leaves the address bar for a cookie scripts cannot read
        until(lambda: browser.find_elements("css selector", "#bot-page:not([hidden])"), 10, "the team's page")
        assert "token" not in browser.current_url and browser.current_url == url.partition("?")[0]
        cookie = browser.get_cookie("arena_token")
        assert cookie["value"] == url.partition("?token=")[2] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert browser.execute_script("return document.cookie") == ""
        row = browser.find_element("css selector", "#game-list tbody tr")
        row.click()
        logs = until(lambda: [p for p in browser.find_elements("css selector", "#v-logs pre.stderr") if p.text], 10, "its stderr")
        assert "<script>window.pwned = 1</script> thinking" in logs[0].text
        assert browser.execute_script("return window.pwned === undefined")
        assert browser.find_elements("css selector", "#v-logs script") == []
        assert console_errors(browser) == []
    finally:
        browser.get("about:blank")
        stop.set()
        server.join(10)


def test_the_page_follows_the_results_by_their_changes_alone(browser, tmp_path):
    """Games stored one by one: the page fetches itself whole once, then only applies the changes the
    stream sends, and ends as the page the server builds (its data, its standings)."""
    file = tournament_file(tmp_path, ("ann", "bob", "cy"), cmds={b: SLOW.replace("0.1", "0") for b in ("ann", "bob", "cy")},
                           cwd=None, rounds=1)
    assert arena("run", file).exit_code == 0  # (in this process: what is watched is its results)
    log = tmp_path / "out" / "games.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:2]))
    ready: list[str] = []
    stop = threading.Event()
    server = threading.Thread(target=serve, args=(LiveState(tmp_path / "out"), "127.0.0.1", 0),
                              kwargs={"on_ready": ready.append, "stop": stop})
    server.start()
    console_errors(browser)  # another test's, read and dropped
    try:
        url = until(lambda: ready, 10, "the server")[0].partition("?")[0]
        browser.get(url)
        browser.execute_script("""
            window.pageFetches = 0;
            const fetchOnce = window.fetch;
            window.fetch = (...args) => { if (args[0] === "page") window.pageFetches += 1; return fetchOnce(...args); };""")
        shown = "return JSON.parse(document.getElementById('report-data').textContent).games.length"
        for count in range(3, len(lines) + 1):
            with open(log, "ab") as handle:
                handle.write(lines[count - 1])
            until(lambda: browser.execute_script(shown) == count, 20, f"{count} games on the page")
        with urllib.request.urlopen(url + "page") as answer:
            whole = answer.read().decode()
        fetched = browser.execute_script("return window.pageFetches")
        data = _text(browser, "#report-data")
        standings = _standings(browser)
        browser.get(url + "page")
        assert fetched == 1 and len(lines) - 2 > 2  # the first change fetched, every later one applied
        assert data == whole.split('id="report-data">')[1].split("</script>")[0]
        assert standings == _standings(browser) and "games" in standings
        assert console_errors(browser) == []
    finally:
        browser.get("about:blank")
        stop.set()
        server.join(10)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _live_game(browser) -> tuple[str, int, str, list[str]] | None:
    """(game id, plies shown, the pieces on its board, its clocks) of the
    first game in progress, read in one go: the page redraws them."""
    return browser.execute_script("""
        const card = document.querySelector("article.live-game");
        if (!card) return null;
        const pieces = Array.from(card.querySelectorAll("[data-piece]")).map((e) => e.dataset.square + e.dataset.piece).join(" ");
        const clocks = Array.from(card.querySelectorAll(".clock")).map((e) => e.textContent);
        return [card.dataset.game, Number(card.dataset.ply), pieces, clocks];""")


def _clock_runs_down(browser) -> bool:
    """Whether the clock of the side to move in the first game in progress shows less 0.15 s later (a tick or two), in the same state: states come every 0.25 s or so."""
    return browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const read = () => {
          const card = document.querySelector("article.live-game:not(.finished):not(.ending)");
          const clock = card && card.querySelector(".clock.to-move[data-at]");
          const [minutes, seconds] = clock ? clock.textContent.split(":") : [];
          return clock ? [card.dataset.game, card.dataset.ply, clock.dataset.at, Number(minutes) * 60 + Number(seconds)] : null;
        };
        const before = read();
        setTimeout(() => {
          const after = read();
          done(before !== null && after !== null && before.slice(0, 3).join() === after.slice(0, 3).join()
               && after[3] < before[3]);
        }, 150);""")


def _text(browser, selector: str) -> str:
    return browser.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : '';", selector)


def _standings(browser) -> str:
    return _text(browser, "#standings table.data")


def _pending_matches(browser) -> int:
    return browser.execute_script("return document.querySelectorAll('.match.pending, .match.open').length")


def test_the_address_with_the_token_followed_from_another_sites_page_shows_the_page(browser, tmp_path, monkeypatch):
    """The printed address, pasted in a chat or a course page and clicked
    there by someone who needs the token: the cookie is SameSite=Strict, which
    a browser does not send on a redirect of a navigation another site began
    (nor on its reloads), so the page is reached by a navigation of its own."""
    import http.server

    from arena.live import peers
    for family in (4, 6):  # as for another user: the token or nothing
        monkeypatch.setitem(peers.TABLES, family, tmp_path / "no-table")
    ready: list[str] = []
    stop = threading.Event()
    server = threading.Thread(target=serve, args=(LiveState(tmp_path), "127.0.0.1", 0),
                              kwargs={"on_ready": ready.append, "stop": stop})
    server.start()
    site = tmp_path / "site"
    site.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        url = until(lambda: ready, 10, "the server")[0]
        (site / "index.html").write_text(f'<a id="go" href="{url}">the live view</a>')
        browser.get(f"http://localhost:{other.server_address[1]}/")  # another site than 127.0.0.1
        browser.find_element("id", "go").click()
        until(lambda: "Standings" in browser.find_element("tag name", "body").text
              or "403" in browser.find_element("tag name", "body").text, 10, "an answer")
        assert "403" not in browser.find_element("tag name", "body").text
        assert browser.current_url == url.partition("?")[0]
        browser.refresh()
        assert "403" not in until(lambda: browser.find_element("tag name", "body").text, 10, "the page again")
    finally:
        browser.get("about:blank")
        other.shutdown()
        stop.set()
        server.join(10)
