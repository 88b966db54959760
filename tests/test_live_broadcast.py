"""The live view as a broadcast, in headless Chromium (the ``browser``
fixture of conftest.py): every game in progress on one big screen, the
champion at the end, a dark theme, a phone's width.  The results are made
in-process (the knockout of :data:`builders.KNOCKOUT`; games in progress
written as a worker writes their live files, under a lock held as a run
holds it), so no bot is started; but for one event played for real, a
Swiss then a knockout of sixteen bots, watched from its first game to its
champion by a projector, a smaller screen in a dark room and a phone at once.

Screenshots go to ``$LIVE_SCREENSHOTS`` when set (docs/img/ took them from there)."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import engine
from arena.live.sharing import room_urls
from arena.results.live_feed import LIVE_DIR, LiveFeed, board_cells
from arena.results.store import LOCK_FILE
from builders import BOTS, KNOCKOUT, ROOT, played_cup, served, tournament_file
from builders import until as _until
from test_live_browser import console_errors, shot
from test_report_browser import OVERFLOWING

#: A browser is asked less often than a file is looked at.
until = functools.partial(_until, every=0.05)

pytestmark = pytest.mark.timeout(150)

#: Games in progress on the big screen: more than its sixteen cards.
PLAYING = 20
#: Of those, the ones outside the knockout (ids not of the schedule), whose bots find them lopsided: shown last.
DULL = 4


@pytest.fixture(scope="module")
def knockout_played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results directory of the knockout of five (bob the champion, a bot named as markup), finished."""
    directory = tmp_path_factory.mktemp("cup") / "out"
    directory.mkdir()
    records, meta = played_cup(*KNOCKOUT)
    (directory / "games.jsonl").write_bytes(b"".join(record.to_line() for record in records))
    (directory / "tournament.json").write_text(json.dumps(meta))
    return directory


@pytest.fixture(scope="module")
def final_paired(knockout_played: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same knockout with its final paired and none of its games recorded (round 3: its first about to start)."""
    directory = tmp_path_factory.mktemp("final") / "out"
    directory.mkdir()
    lines = (knockout_played / "games.jsonl").read_bytes().splitlines(keepends=True)
    (directory / "games.jsonl").write_bytes(b"".join(l for l in lines if not json.loads(l)["game_id"].startswith("r3-")))
    (directory / "tournament.json").write_bytes((knockout_played / "tournament.json").read_bytes())
    return directory


@pytest.fixture(scope="module")
def staged_played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Swiss of two rounds, then a knockout of its top four, finished: its ranking has a score and points."""
    directory = tmp_path_factory.mktemp("staged") / "out"
    directory.mkdir()
    records, meta = played_cup("stages: [{format: swiss, rounds: 2}, {format: knockout, top: 4}]",
                               ["ann", "bob", "cy", "dan", "eve"], {})
    (directory / "games.jsonl").write_bytes(b"".join(record.to_line() for record in records))
    (directory / "tournament.json").write_text(json.dumps(meta))
    return directory


#: The names of a real class's bots: a bracket of eight of them at 16 bots must cut none.
SCIENTISTS = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Knuth", "Liskov", "Hamilton", "Babbage", "Shannon",
              "Church", "Backus", "Ritchie", "Thompson", "Wirth", "Kernighan", "Torvalds"]


@pytest.fixture(scope="module")
def sixteen_named(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A Swiss of 16 named bots, then a knockout of eight: its results directory midway through the
    quarter-finals (``mid``) and at the end (``end``)."""
    records, meta = played_cup("stages: [{format: swiss, rounds: 2}, {format: knockout, top: 8, tiebreak_pairs: 1}]",
                               SCIENTISTS, {})
    directories = {}
    for name, kept in (("mid", records[:36]), ("end", records)):
        directory = directories[name] = tmp_path_factory.mktemp(name) / "out"
        directory.mkdir()
        (directory / "games.jsonl").write_bytes(b"".join(record.to_line() for record in kept))
        last = max(record.round for record in kept)
        (directory / "tournament.json").write_text(json.dumps({**meta, "pairings": [
            pairing for pairing in meta["pairings"] if pairing["round"] <= last]}))
    return directories


@contextmanager
def window(browser, width: int, height: int) -> Iterator[None]:
    """A viewport of ``width`` × ``height`` CSS pixels exactly (a window's size would include its frame)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield
    finally:
        browser.get("about:blank")  # the page would try to reconnect to a server that is gone
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@contextmanager
def running(directory: Path) -> Iterator[None]:
    """The directory's lock held, as ``arena run`` holds it while it plays: its live files are shown."""
    with open(directory / LOCK_FILE, "w") as lock:
        lock.write(str(os.getpid()))
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            for slot in range(PLAYING):
                (directory / LIVE_DIR / f"w{slot}.json").unlink(missing_ok=True)


def slot_moves(slot: int, plies: int) -> list[tuple[str, list[str]]]:
    """The first ``plies`` moves of game ``slot`` (each game its own, none ending yet), each with the board after it."""
    game = engine.get_game("oxono")
    state = game.new_state(opening=0)
    moves = []
    for ply in range(plies):
        legal = game.legal_moves(state)
        legal = legal[(slot * 7 + ply * 3) % len(legal):] + legal
        move = next(move for move in legal if game.outcome(game.apply(state, move)) is None)
        state = game.apply(state, move)
        moves.append((move, list(board_cells(game, state))))
    return moves


def publish(directory: Path, slot: int, plies: int, game_id: str | None = None, players: list[str] | None = None) -> str:
    """Game ``slot`` in progress, ``plies`` moves in, written as a worker writes its live file; its id.
    ``game_id`` and ``players``: another game than the slot's own (of the schedule's round its id names)."""
    moves = [move for move, _ in slot_moves(slot, plies)]
    dull = slot >= PLAYING - DULL
    # Knockout games by the schedule's ids (round 3 is the final); the dull ones by ids of no schedule.
    game_id = game_id or (f"friendly-{slot}" if dull else f"r{1 + slot % 3}-ann~bob-g{10 + slot}")
    score = 40 if dull else round(0.1 * slot, 1)
    round_ = int(game_id[1:game_id.index("-")]) if game_id.startswith("r") else 1 + slot % 3
    data = {"id": game_id, "game": "oxono", "round": round_, "players": players or [f"p{slot}a", f"p{slot}b"],
            "opening": 0, "opening_moves": [], "moves": moves, "clock_ms": [60_000 - 500 * plies, 61_000 - 400 * plies],
            "per_move_ms": [None, None], "thinking_ms": 0,
            "infos": {str(ply): json.dumps({"score": score * (-1) ** k, "depth": 4 + k})
                      for k, ply in enumerate((plies - 2, plies - 1)) if ply >= 0}}
    LiveFeed(directory / LIVE_DIR, f"w{slot}").publish(json.dumps(data).encode())
    return game_id


def test_the_big_screen_shows_sixteen_games_at_once_the_knockout_first_none_moving(browser, knockout_played):
    with running(knockout_played), served(knockout_played) as url, window(browser, 1920, 1080):
        ids = [publish(knockout_played, slot, 4 + slot % 5) for slot in range(PLAYING)]
        console_errors(browser)  # another test's, read and dropped
        browser.get(url.replace("/?", "/?screen=1&"))
        until(lambda: len(browser.find_elements("css selector", "article.live-game")) == 16, 20, "sixteen cards")
        browser.execute_script("""
            window.slots = {};
            const note = () => document.querySelectorAll("article.live-game").forEach((card) => {
              const taken = window.slots[card.dataset.game] = window.slots[card.dataset.game] || [];
              if (!taken.includes(card.dataset.slot)) taken.push(card.dataset.slot);
            });
            note();
            new MutationObserver(note).observe(document.body, { childList: true, subtree: true });""")
        # The games move on (a ply each, three times): every card stays where it is.
        for step in range(1, 4):
            for slot in range(PLAYING):
                publish(knockout_played, slot, 4 + slot % 5 + step)
            until(lambda: browser.execute_script(
                "return Array.from(document.querySelectorAll('article.live-game')).map((c) => Number(c.dataset.ply))"
                ).count(0) == 0 and _plies(browser) == {i: 4 + s % 5 + step for s, i in enumerate(ids)
                                                         if s < PLAYING - DULL}, 20, f"the moves of step {step}")
        cards = _cards_in_view(browser)
        shot(browser, "live-multiboard.png")
        slots = browser.execute_script("return window.slots")
        assert len(slots) == 16 and all(len(taken) == 1 for taken in slots.values()), slots
        # The knockout's games have the cards; the four others wait, counted.
        assert set(slots) == set(ids[:PLAYING - DULL])
        assert browser.find_element("id", "live-more").text == f"and {DULL} more games"
        assert _in_view(browser, "#live-more")
        # Every card whole in the window, its board large enough to read from afar.
        assert len(cards) == 16 and all(card["inside"] for card in cards), cards
        assert min(card["board"] for card in cards) >= 150, cards
        # The last move marked on each board, the reserves and the bots' infos under it.
        card = browser.find_element("css selector", "article.live-game")
        assert 2 <= len(card.find_elements("css selector", ".sq.last")) <= 3
        notes = card.find_element("css selector", ".live-notes").text
        assert "pink: X " in notes and '"depth": 4' in notes and '"score"' in notes, notes
        assert console_errors(browser) == []


def test_the_champion_and_the_bracket_are_in_view_at_the_end(browser, knockout_played):
    with served(knockout_played) as url:
        for width, height in ((1920, 1080), (1280, 720)):
            with window(browser, width, height):
                browser.get(url.replace("/?", "/?screen=1&"))
                until(lambda: _in_view(browser, "#champion"), 20, "the champion")
                shot(browser, "live-screen.png" if width == 1920 else f"live-champion-{width}.png")
                assert browser.find_element("css selector", "#champion .champion-name").text == "bob"
                assert browser.find_element("css selector", "#champion .champion-title").text.endswith("CHAMPION")
                assert browser.find_element("css selector", "#champion .champion-rule").text == \
                    "won the final 2–0 against ann"
                assert _in_view(browser, "#champion") and _in_view(browser, ".bracket"), (width, height)
                assert _in_view(browser, "#standings table.data tbody tr:nth-child(5)"), (width, height)
                assert console_errors(browser) == []
        # At a desk too: the champion, then the ranking's top, before the games' cards.
        with window(browser, 1280, 720):
            browser.get(url)
            until(lambda: _in_view(browser, "#champion"), 20, "the champion")
            assert _in_view(browser, "#standings table.data tbody tr:nth-child(3)")


def test_the_page_is_dark_in_a_dark_room(browser, knockout_played):
    with served(knockout_played) as url, window(browser, 1400, 900):
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        try:
            browser.get(url)
            until(lambda: _in_view(browser, "#champion"), 20, "the champion")
            colours = browser.execute_script("""
                const luminance = (e, what) => { const [r, g, b] = getComputedStyle(e)[what].match(/\\d+/g).map(Number);
                                                 return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; };
                return [luminance(document.body, "backgroundColor"), luminance(document.body, "color"),
                        luminance(document.querySelector("table.data th"), "backgroundColor"),
                        luminance(document.querySelector(".match"), "backgroundColor")];""")
            shot(browser, "live-dark.png")
        finally:
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        page, text, heading, match = colours
        assert page < 0.15 and text > 0.7 and heading < 0.25 and match < 0.25, colours
        browser.get(url)
        until(lambda: _in_view(browser, "#champion"), 20, "the champion")
        light = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert light == "rgb(255, 255, 255)"


@pytest.mark.parametrize("screen", ["", "screen=1&"], ids=["page", "big-screen-mode-on-a-phone"])
def test_a_phone_shows_the_place_and_points_first_and_nothing_wider_than_its_screen(browser, knockout_played, screen):
    with running(knockout_played), served(knockout_played) as url, window(browser, 375, 812):
        for slot in range(3):
            publish(knockout_played, slot, 5)
        browser.get(url.replace("/?", f"/?{screen}"))
        until(lambda: len(browser.find_elements("css selector", "article.live-game")) == 3, 20, "the cards")
        shot(browser, f"live-phone{'-screen' if screen else ''}.png")
        width = browser.execute_script("return window.innerWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        assert browser.execute_script(OVERFLOWING) == []
        headers, ranking_top, live_top, font = browser.execute_script("""
            const table = document.querySelector("#standings table.data");
            return [Array.from(table.querySelectorAll("thead th")).filter((th) => th.offsetParent !== null)
                      .map((th) => th.textContent.trim()),
                    table.getBoundingClientRect().top, document.getElementById("live").getBoundingClientRect().top,
                    getComputedStyle(document.body).fontSize];""")
        assert headers == ["#", "bot", "score"], headers  # the knockout ranks by points: its "score"
        assert ranking_top < live_top and ranking_top < 812
        assert font == "16px"  # the phone's layout, big-screen mode or not
        # The narrowest phones of the day: 360 pixels.
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": False})
        until(lambda: browser.execute_script("return window.innerWidth") == 360, 5, "the narrower window")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 360
        assert browser.execute_script(OVERFLOWING) == []


def test_a_match_and_a_teams_round_whose_game_is_on_a_card_say_being_played(browser, final_paired):
    """The page knows the games recorded: the final's first game on a card is what says it is played."""
    with running(final_paired), window(browser, 1280, 900):
        publish(final_paired, 0, 3, "r3-ann~bob-g1", ["ann", "bob"])
        with served(final_paired) as url:
            browser.get(url)
            until(lambda: browser.find_elements("css selector", "article.live-game"), 20, "the final's card")
            final = browser.find_element("css selector", ".ko-round[data-round='3'] .match")
            assert final.find_element("css selector", ".how").text == "being played"
            assert "playing" in final.get_attribute("class").split()
            # The semi-finals, over, say how they were won.
            assert "being played" not in browser.find_element("css selector", ".ko-round[data-round='2']").text
        with served(final_paired, bot="bob") as url:
            browser.get(url)
            until(lambda: browser.find_elements("css selector", "article.live-game"), 20, "the final's card")
            lines = browser.execute_script("""return Array.from(document.querySelectorAll("#b-rounds tbody tr"),
                (tr) => Array.from(tr.children, (td) => td.textContent))""")
            assert [line[4] for line in lines if line[:2] == ["3", "ann"]] == ["being played"], lines
        assert console_errors(browser) == []


@pytest.mark.parametrize("width, height", [(1280, 720), (375, 812)], ids=["big-screen", "phone"])
def test_a_screen_shows_the_points_or_the_score_never_both_without_their_legend(browser, staged_played, width, height):
    with served(staged_played) as url, window(browser, width, height):
        browser.get(url.replace("/?", "/?screen=1&"))
        until(lambda: _in_view(browser, "#champion"), 20, "the champion")
        shown = browser.execute_script("""return Array.from(document.querySelector("#standings table.data").tHead.rows[0].cells)
            .filter((th) => th.offsetParent !== null).map((th) => th.textContent.trim())""")
        assert "points" in shown and "score" not in shown, shown


def test_a_game_played_again_after_its_run_stopped_says_so_on_its_card(browser, final_paired):
    with running(final_paired), served(final_paired) as url, window(browser, 1280, 900):
        publish(final_paired, 0, 6, "r3-ann~bob-g1", ["ann", "bob"])
        browser.get(url)
        until(lambda: browser.find_elements("css selector", "article.live-game[data-ply='6']"), 20, "the card")
        assert browser.find_elements("css selector", ".live-again") == []
        (final_paired / LIVE_DIR / "w0.json").unlink()  # its run killed
        until(lambda: browser.find_elements("css selector", "article.live-game.ending"), 20, "the card ending")
        publish(final_paired, 0, 0, "r3-ann~bob-g1", ["ann", "bob"])  # the next run plays it from its start
        card = until(lambda: browser.find_elements("css selector", "article.live-game[data-ply='0']"), 20, "again")[0]
        assert card.find_element("css selector", ".live-again").text == \
            "played again from its start: the run stopped during it"
        assert len(browser.find_elements("css selector", "article.live-game")) == 1


@pytest.mark.parametrize("moment", ["mid", "end"])
def test_the_big_screens_bracket_cuts_no_name_of_sixteen_bots(browser, sixteen_named, moment):
    directory = sixteen_named[moment]
    with served(directory) as url:
        for width, height in ((1920, 1080), (1280, 720)):
            with window(browser, width, height):
                browser.get(url.replace("/?", "/?screen=1&"))
                until(lambda: browser.find_elements("css selector", ".bracket .name"), 20, "the bracket")
                cut, scrolls = browser.execute_script("""const bracket = document.querySelector(".bracket");
                    return [Array.from(bracket.querySelectorAll(".name")).filter((name) => name.scrollWidth > name.clientWidth)
                              .map((name) => name.textContent), bracket.scrollWidth > bracket.clientWidth]""")
                assert cut == [] and not scrolls, (width, cut, scrolls)
                assert _in_view(browser, ".bracket"), (width, height)


def test_a_card_steps_through_the_moves_played_between_two_states_in_order(browser, final_paired):
    with running(final_paired), served(final_paired) as url, window(browser, 1280, 900):
        game_id = publish(final_paired, 0, 4, "r3-ann~bob-g1", ["ann", "bob"])
        browser.get(url)
        until(lambda: browser.find_elements("css selector", "article.live-game[data-ply='4']"), 20, "the card")
        browser.execute_script("""
            window.steps = [];
            new MutationObserver(() => document.querySelectorAll("article.live-game").forEach((card) => {
              const last = window.steps[window.steps.length - 1];
              if (!last || last.ply !== Number(card.dataset.ply))
                window.steps.push({ ply: Number(card.dataset.ply), cells: JSON.parse(card.dataset.key).cells });
            })).observe(document.getElementById("live-games"), { childList: true, subtree: true });""")
        publish(final_paired, 0, 12, game_id, ["ann", "bob"])  # eight plies in one state
        until(lambda: browser.find_elements("css selector", "article.live-game[data-ply='12']"), 20, "the last ply")
        steps = browser.execute_script("return window.steps")
    # Every position in turn, each as the engine has it.
    expected = [(ply, cells) for ply, (_, cells) in enumerate(slot_moves(0, 12), start=1)][4:]
    assert [(step["ply"], step["cells"]) for step in steps if step["ply"] > 4] == expected, [step["ply"] for step in steps]


def test_a_server_gone_turns_the_status_red_at_once(browser, knockout_played):
    with window(browser, 1200, 900):
        with served(knockout_played) as url:
            browser.get(url)
            until(lambda: "finished" in browser.find_element("id", "status").get_attribute("class"), 20, "the status")
        line = until(lambda: "gone" in browser.find_element("id", "status").get_attribute("class")
                     and browser.find_element("id", "status"), 5, "the red status")
        assert "does not answer" in line.text
        assert browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", line) == "rgb(198, 40, 40)"


def test_a_server_gone_leaves_its_boards_dimmed_and_their_clocks_stopped(browser, final_paired):
    with running(final_paired), window(browser, 1200, 900):
        publish(final_paired, 0, 4, "r3-ann~bob-g1", ["ann", "bob"])
        with served(final_paired) as url:
            browser.get(url)
            until(lambda: browser.find_elements("css selector", ".clock.to-move[data-at]"), 20, "a running clock")
        until(lambda: "gone" in browser.find_element("id", "status").get_attribute("class"), 5, "the red status")
        clock = browser.find_element("css selector", ".clock.to-move")
        before = clock.text
        time.sleep(1)
        assert clock.text == before  # the last clock heard, not one running down to 0:00 with nobody thinking
        assert float(browser.execute_script("return getComputedStyle(arguments[0].closest('article')).opacity", clock)) < 1


def test_a_server_for_the_room_shows_its_address_as_a_qr_code(browser, knockout_played):
    """Listening on every address, the page shows the QR code of the machine's own address (with the token)."""
    with served(knockout_played, "0.0.0.0") as url, window(browser, 1920, 1080):
        shared = room_urls(url)[0]
        assert not shared.startswith("http://0.0.0.0")
        browser.get(shared.replace("/?", "/?screen=1&"))
        until(lambda: _in_view(browser, "#share"), 20, "the QR code")
        until(lambda: browser.execute_script("return document.querySelector('#share img').naturalWidth") > 100, 10,
              "the QR code's image")
        assert _in_view(browser, "#share")
        shot(browser, "live-share.png")


def _plies(browser) -> dict[str, int]:
    return browser.execute_script("""
        const plies = {};
        document.querySelectorAll("article.live-game").forEach((c) => { plies[c.dataset.game] = Number(c.dataset.ply); });
        return plies;""")


def _cards_in_view(browser) -> list[dict[str, object]]:
    return browser.execute_script("""
        return Array.from(document.querySelectorAll("article.live-game")).map((card) => {
          const r = card.getBoundingClientRect(), board = card.querySelector("svg.board").getBoundingClientRect();
          return { id: card.dataset.game, board: Math.round(Math.min(board.width, board.height)),
                   inside: r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1 };
        });""")


def _in_view(browser, selector: str) -> bool:
    """Whether the element is wholly in the window as the page opened (no scrolling)."""
    return browser.execute_script("""
        const e = document.querySelector(arguments[0]);
        if (!e || e.offsetParent === null) return false;
        const r = e.getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1;""", selector)


class QuietNetwork:
    """A TCP relay to ``port`` that can stop relaying without closing anything, as a network that drops
    (a laptop's Wi-Fi gone) leaves a connection: the stream is told nothing."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.quiet = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.port))
            except OSError:
                return
            self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._relay, args=(source, sink), daemon=True).start()

    def _relay(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                while self.quiet.is_set():  # held back, the connection left open
                    time.sleep(0.05)
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        for each in self.sockets:
            each.close()


def test_a_page_that_hears_nothing_from_its_server_turns_the_status_red(browser, knockout_played, monkeypatch):
    """The network goes quiet, the connection open: past two and a half heartbeats, red; the server heard again, not."""
    from arena.live import server

    monkeypatch.setattr(server, "HEARTBEAT_S", 0.4)
    status = lambda: browser.find_element("id", "status").get_attribute("class")  # noqa: E731
    with served(knockout_played) as url, window(browser, 1200, 900):
        network = QuietNetwork(urlsplit(url).port)
        try:
            browser.get(network.address)  # this user's browser on loopback: no token needed
            until(lambda: _in_view(browser, "#champion") and "finished" in status(), 20, "the page")
            network.quiet.set()
            until(lambda: "gone" in status(), 5, "the red status")
            assert "does not answer" in browser.find_element("id", "status").text
            network.quiet.clear()
            until(lambda: "finished" in status(), 5, "the status as the server says it again")
        finally:
            browser.get("about:blank")
            network.close()


# -- one event, three screens ---------------------------------------------------------

#: Sixteen bots of 80 ms a move that think 1.4 s before a game's first move: a clock seen running for a second.
#: The quarter-finals wait from their fifth ply until the test has seen them (``{gates}``, see
#: slow_random.py): the rounds before may be played faster than the screens are looked at.  Each round
#: starts as soon as the last game of the one before ends, and its games wait for the cards of results
#: the room has not read yet (live.js, ``SHOWN_S``): what :data:`SHOWN_MS` checks.
EVENT_BOTS = tuple(f"b{i:02d}" for i in range(1, 17))
SLEEPY = f"[python, {BOTS / 'slow_random.py'}, '0.08', '1.4', '{{gates}}', r3-]"
#: The clocks run while their games are held: time enough for three screens to be looked at.
EVENT_CLOCK = "30+0.1"
#: How long each screen shows a finished game's result at the least.
SHOWN_MS = 2000
EVENT = "stages: [{format: swiss, rounds: 2}, {format: knockout, top: 8, tiebreak_pairs: 1}]\n"
#: The screens watching it: a projector in big-screen mode, a smaller one (in a dark room), a phone.
SCREENS = {"projector": (1920, 1080, "screen=1&", False), "small": (1280, 720, "screen=1&", True),
           "phone": (375, 812, "", False)}

#: Put in every page before its own script: what it shows after each state of the stream (right after
#: live.js drew it), and how its cards come and go.  ``inView``: the whole of an element inside the window.
RECORDER = """
const big = location.search.includes("screen=1");
const seen = window.seen = { cards: {}, course: {}, misplaced: [], playing: 0, ticks: 0, outOfView: [], wide: [] };
const inView = (e) => { if (!e || e.offsetParent === null) return false; const r = e.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1; };
window.inView = inView;
const overflowing = () => { %s };
let lastWide = 0;
function afterState(data) {
  const now = performance.now();
  const playing = data.live.filter((g) => g.ended === undefined && !g.ending);
  // Each game's course through the states (in progress, ending, ended, absent), for a card that moved.
  const status = new Map(data.live.map((g) => [g.id, g.ended !== undefined ? "ended" : g.ending ? "ending" : "playing"]));
  new Set([...status.keys(), ...Object.keys(seen.course)]).forEach((id) => {
    const state = status.get(id) || "absent", course = seen.course[id] = seen.course[id] || [];
    if (course.length === 0 || course[course.length - 1][1] !== state) course.push([Math.round(now), state]);
  });
  seen.playing = Math.max(seen.playing, playing.length);
  playing.forEach((g) => {
    const card = document.querySelector(`article.live-game[data-game="${CSS.escape(g.id)}"]`);
    // On a big screen every card in the window; on a phone one under another, none wider than it.
    const shown = card && (big ? inView(card) : card.offsetParent !== null && card.getBoundingClientRect().right <= innerWidth + 1);
    if (!shown) seen.misplaced.push([g.id, card ? JSON.stringify(card.getBoundingClientRect()) : "no card"]);
  });
  if (big && document.querySelector(".bracket") && !(inView(document.querySelector(".bracket"))
      && inView(document.querySelector("#standings table.data tbody tr:nth-child(3)"))))
    seen.outOfView.push(data.status.line);
  if (!big && now - lastWide > 1000) {
    lastWide = now;
    const wide = overflowing();
    if (document.documentElement.scrollWidth > innerWidth) wide.push("page " + document.documentElement.scrollWidth);
    seen.wide.push(...wide);
  }
}
const Stream = window.EventSource;
window.EventSource = class extends Stream {
  addEventListener(name, listener, options) {
    super.addEventListener(name, listener, options);
    if (name === "state") super.addEventListener("state", (event) => afterState(JSON.parse(event.data)));
  }
};
// Each card as drawn: its slots (and when it took each, left or came back), when it was first seen
// finished (its ply and result) and when it left.
new MutationObserver(() => {
  const now = Math.round(performance.now()), present = new Set();
  document.querySelectorAll("article.live-game").forEach((card) => {
    const id = card.dataset.game;
    present.add(id);
    const c = seen.cards[id] = seen.cards[id] || { slots: [], log: [], finished: null, gone: false };
    if (!c.slots.includes(card.dataset.slot)) {
      c.slots.push(card.dataset.slot);
      c.log.push([now, card.dataset.slot, card.className, card.dataset.ply]);
    }
    if (card.classList.contains("finished") && c.finished === null)
      c.finished = { ply: Number(card.dataset.ply), result: card.querySelector(".live-result").textContent, from: now, to: null };
  });
  Object.entries(seen.cards).forEach(([id, c]) => {
    if (c.finished && c.finished.to === null && !present.has(id)) c.finished.to = now;
    if (present.has(id) === c.gone) {
      c.gone = !c.gone;
      c.log.push([now, c.gone ? "gone" : "back"]);
    }
  });
}).observe(document, { childList: true, subtree: true });
// Every second, the clock of the side to move on each card in progress: one that changed while its game
// stayed at the same move is a clock ticking while a bot thinks.
let clocks = {};
setInterval(() => {
  const now = {};
  document.querySelectorAll("article.live-game:not(.finished):not(.ending)").forEach((card) => {
    const clock = card.querySelector(".clock.to-move");
    if (clock) now[card.dataset.game] = card.dataset.ply + " " + clock.textContent;
  });
  Object.entries(now).forEach(([id, read]) => {
    const before = clocks[id];
    if (before && before.split(" ")[0] === read.split(" ")[0] && before !== read) seen.ticks += 1;
  });
  clocks = now;
}, 1000);
""" % OVERFLOWING


@pytest.mark.timeout(240)
def test_a_sixteen_bot_event_on_a_projector_a_small_screen_and_a_phone(browser, tmp_path):
    """A Swiss of two rounds, then a knockout of its top eight, eight games at once, watched from
    its start to its champion by three screens at once (one tab each)."""
    gates = tmp_path / "gates"
    gates.mkdir()
    file = tournament_file(tmp_path, EVENT_BOTS, EVENT, cmds={b: SLEEPY.format(gates=gates) for b in EVENT_BOTS},
                           cwd=None, concurrency=8, rounds=None, time_control=EVENT_CLOCK)
    out = tmp_path / "out"
    out.mkdir()
    tabs: dict[str, str] = {}
    recorders: list[dict[str, str]] = []
    with served(out) as url:
        try:
            for name, (width, height, screen, dark) in SCREENS.items():
                if tabs:
                    browser.switch_to.new_window("window")
                tabs[name] = browser.current_window_handle
                browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
                browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
                    {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
                recorders.append(browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER}))
                browser.get(url.replace("/?", f"/?{screen}"))
                until(lambda: browser.execute_script("return window.seen !== undefined && !!document.getElementById('live')"),
                      20, f"the {name}'s page")
            console_errors(browser)  # another test's, read and dropped
            run = subprocess.Popen([sys.executable, "-m", "arena", "run", str(file)], cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
            try:
                mid = _event_midway(browser, tabs, run)
                (gates / "all").touch()
                assert run.wait(120) == 0, run.stderr.read().decode()
            finally:
                (gates / "all").touch()  # (after a failure too: no bot is left waiting)
                if run.poll() is None:
                    run.kill()
                    run.wait()
            records = {json.loads(line)["game_id"]: json.loads(line) for line in (out / "games.jsonl").open()}
            for name, handle in tabs.items():
                browser.switch_to.window(handle)
                until(lambda: browser.execute_script("return inView(document.getElementById('champion'))"), 30,
                      f"the champion on the {name}")
                shot(browser, f"live-event-{name}-end.png")
                # Every held card has left (or will): a last look at how long each stayed.
                seen = browser.execute_script("return window.seen")
                _check_screen(name, seen, records, mid[name])
        finally:
            for handle in list(tabs.values())[1:]:
                browser.switch_to.window(handle)
                browser.close()
            if tabs:
                browser.switch_to.window(tabs["projector"])
            if recorders:  # the fixture's own window: other tests' pages without it
                browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", recorders[0])
            browser.get("about:blank")
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


#: Luminance of an element's colour, 0 (black) to 1 (white).
LUMINANCE = """
const luminance = (e, what) => { const [r, g, b] = getComputedStyle(e)[what].match(/\\d+/g).map(Number);
                                 return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; };"""


def _event_midway(browser, tabs: dict[str, str], run: subprocess.Popen[bytes]) -> dict[str, dict[str, object]]:
    """Once the knockout plays its quarter-finals, eight games at once: each screen as it is then (its
    screenshot, and the dark one's colours)."""
    def quarter_finals() -> bool:
        browser.switch_to.window(tabs["projector"])
        assert run.poll() is None, "the event ended before its quarter-finals were seen"
        return browser.execute_script("""
            const playing = Array.from(document.querySelectorAll("article.live-game:not(.finished):not(.ending)"));
            return playing.length >= 6 && playing.every((card) => card.querySelector("h3").textContent.startsWith("Quarter-final"))
                   && playing.reduce((plies, card) => plies + Number(card.dataset.ply), 0) >= 3 * playing.length;""")

    until(quarter_finals, 90, "the quarter-finals in progress")
    midway: dict[str, dict[str, object]] = {}
    for name, handle in tabs.items():
        browser.switch_to.window(handle)
        shot(browser, f"live-event-{name}.png")
        midway[name] = browser.execute_script(LUMINANCE + """
            const card = document.querySelector("article.live-game");
            return { page: luminance(document.body, "backgroundColor"), text: luminance(document.body, "color"),
                     card: card ? luminance(card, "backgroundColor") : null,
                     heading: luminance(document.querySelector("#standings table.data th"), "backgroundColor") };""")
    return midway


def _check_screen(name: str, seen: dict[str, object], records: dict[str, dict[str, object]],
                  colours: dict[str, float]) -> None:
    """What screen ``name`` showed of the event (the recorder's ``seen``) against the event's records."""
    cards = seen["cards"]
    # Eight games at once, every one of them on a card, in the window on a big screen; no card moved.
    assert seen["playing"] == 8, (name, seen["playing"])
    assert seen["misplaced"] == [], (name, seen["misplaced"][:5])
    moved = {game: (c["log"], seen["course"].get(game)) for game, c in cards.items() if len(c["slots"]) > 1}
    assert moved == {}, (name, moved)
    # Each game's final position, with its result, for two seconds or more.
    for game_id, record in records.items():
        finished = cards.get(game_id, {}).get("finished")
        assert finished is not None, (name, game_id, "never seen finished")
        assert finished["ply"] == len(record["moves"]), (name, game_id, finished)
        assert f"wins by {record['reason']}" in finished["result"] or finished["result"].startswith("draw by"), finished
        assert finished["to"] is None or finished["to"] - finished["from"] >= SHOWN_MS, (name, game_id, finished)
    # A clock ran down while its bot thought: two readings a second apart, the same move on the board.
    assert seen["ticks"] > 0, name
    # The bracket and the top of the ranking in the window all along; nothing wider than a phone.
    assert seen["outOfView"] == [], (name, seen["outOfView"][:5])
    assert seen["wide"] == [], (name, seen["wide"][:5])
    dark = SCREENS[name][3]
    assert (colours["page"] < 0.15 and colours["text"] > 0.7 and colours["heading"] < 0.25
            and (colours["card"] is None or colours["card"] < 0.25)) if dark else colours["page"] > 0.9, (name, colours)
