"""The HTML report in a real browser: Debian's headless Chromium driven by selenium.

One browser serves the whole module.  The tests check that the tables list
every bot, open games through their links, step through them with the keys and
compare the board with the engine's state square by square at every ply.
They save screenshots (to ``$REPORT_SCREENSHOTS`` when set, else a temporary
directory) of the standings and of a board of each game.

Each report is checked as a small tournament's (one file) and as a large
one's (its games' moves in files of five games beside the page, loaded when
a game is opened).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import engine
from arena.game.positions import positions
from arena.game.records import GameRecord
from arena.results.report import build_report_files, games_href, write_report
from arena.results.show import result_text
from builders import HOSTILE_NAME, KNOCKOUT, large_cup, meta_of, played_cup, report_page, results
from played_games import played_games

BOTS = ["ann", "bob", "cy"]


def with_a_bot_that_never_started(records: list[GameRecord]) -> list[GameRecord]:
    first = records[0]
    loser, winner = first.players
    return records + [dataclasses.replace(
        first, game_id="r9-nostart", index=len(records), moves=[], winner=winner, reason="startup_failure",
        forfeit_by=loser, detail="sent no 'ready' within 10 s", scores=None,
    )]


#: Every way a game can end, forfeits included (one before the first move), in both games.
GAMES = {name: with_a_bot_that_never_started(played_games(name, BOTS, 18, seed=11, forfeit_every=5, opening_plies=3))
         for name in engine.GAMES}


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    directory = os.environ.get("REPORT_SCREENSHOTS")
    path = Path(directory) if directory else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


#: A large report's files of games hold this many games: a small tournament's report has several.
FILE_GAMES = 5


def write_page(path: Path, records: list[GameRecord], meta: dict, files: bool, **options) -> None:
    """The report of ``records`` at ``path``: one file, or with ``files`` a large report's page and its files of games."""
    if files:
        page, games = build_report_files(results(records, meta), games_href(path), inline_games=0,
                                         chunk_games=FILE_GAMES, **options)
        write_report(path, page, games)
    else:
        write_report(path, report_page(records, meta, **options))


@pytest.fixture(scope="module", params=[(name, files) for files in (False, True) for name in sorted(GAMES)],
                ids=lambda p: p[0] + ("-files" if p[1] else ""))
def report(request, tmp_path_factory) -> tuple[str, str, list[GameRecord]]:
    name, files = request.param
    records = GAMES[name]
    path = tmp_path_factory.mktemp(name) / "report.html"
    meta = {"name": f"{name} cup", "game": name, "time_control": {"initial_ms": 5000, "increment_ms": 100},
            "bots": [{"name": bot, "options": {}} for bot in BOTS]}
    write_page(path, records, meta, files)
    return name, path.as_uri(), records


def board(driver) -> dict[str, str | None]:
    return driver.execute_script(
        "const out = {}; document.querySelectorAll('#viewer [data-square]').forEach("
        "(e) => { out[e.dataset.square] = e.getAttribute('data-piece'); }); return out;"
    )


def expected_board(state, game_name: str) -> dict[str, str | None]:
    rows = engine.get_game(game_name).to_json(state)["board"]
    return {
        f"{'abcdefg'[f]}{r + 1}": code or None
        for r, row in enumerate(rows) for f, code in enumerate(row) if code != "#"
    }


def shown_ply(driver) -> int:
    return int(driver.find_element("id", "v-ply").get_attribute("data-ply"))


def no_script_errors(driver) -> None:
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def test_tables_list_every_bot(browser, report, shots):
    name, url, records = report
    browser.get(url)
    browser.execute_script("sessionStorage.clear()")  # no filter or sorting kept from another test
    browser.refresh()
    shown = [t.get_attribute("data-table") for t in browser.find_elements("css selector", "table[data-table]")]
    assert shown == ["ranking", "crosstable", "colors"]  # three bots: no match or SPRT table
    ranking = browser.find_elements("css selector", 'table[data-table="ranking"] tbody tr td:nth-child(2)')
    assert sorted(td.text for td in ranking) == BOTS
    head = browser.find_elements("css selector", 'table[data-table="crosstable"] thead th')
    assert sorted(th.text for th in head[1:]) == BOTS
    crosstable = browser.find_elements("css selector", 'table[data-table="crosstable"] tbody tr td:first-child')
    assert sorted(td.text for td in crosstable) == BOTS
    colours = browser.find_elements("css selector", 'table[data-table="colors"] tbody tr td:first-child')
    assert [td.text for td in colours] == list(engine.get_game(name).colors)
    for chart in ("series", "bar", "box"):
        drawn = browser.find_elements("css selector", f"svg.chart g.{chart}")
        assert sorted(g.get_attribute("data-bot") for g in drawn) == BOTS
    rows = browser.find_elements("css selector", "#game-list tbody tr")
    assert [tr.get_attribute("data-game") for tr in rows] == [r.game_id for r in records]
    browser.save_screenshot(str(shots / f"{name}-standings.png"))
    no_script_errors(browser)


def test_filters_and_sorting(browser, report):
    from selenium.webdriver.support.ui import Select

    _, url, records = report
    browser.get(url)
    Select(browser.find_element("id", "f-bot")).select_by_value("ann")
    Select(browser.find_element("id", "f-result")).select_by_value("bot-won")
    won = [r.game_id for r in records if r.winner is not None and r.players[r.winner] == "ann"]
    assert [tr.get_attribute("data-game") for tr in browser.find_elements("css selector", "#game-list tbody tr")] == won
    assert browser.find_element("id", "game-count").text == f"{len(won)} of {len(records)} games"
    browser.find_element("id", "f-clear").click()
    Select(browser.find_element("id", "f-reason")).select_by_value("timeout")
    forfeits = [r.game_id for r in records if r.reason == "timeout"]
    assert forfeits and [tr.get_attribute("data-game") for tr in browser.find_elements("css selector", "#game-list tbody tr")] == forfeits
    browser.find_element("id", "f-clear").click()
    header = browser.find_element("css selector", '#game-list th[data-sort="plies"]')
    header.click()
    header.click()  # the second click sorts downwards
    longest = sorted(records, key=lambda r: (-len(r.moves), -r.index))
    shown = [tr.get_attribute("data-game") for tr in browser.find_elements("css selector", "#game-list tbody tr")]
    assert [len(next(r for r in records if r.game_id == gid).moves) for gid in shown] == [len(r.moves) for r in longest]
    no_script_errors(browser)


def open_by_link(browser, game_id: str) -> None:
    browser.find_element("css selector", f'#game-list tr[data-game="{game_id}"] a').click()
    wait_for_game(browser, game_id)


def wait_for_game(browser, game_id: str) -> None:
    """The viewer shows ``game_id``: at once from a small report, once its file is loaded from a large one's."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "viewer").is_displayed()
                                     and d.find_element("id", "v-title").text.startswith(f"Game {game_id}:"))


def test_step_through_games_with_the_keys(browser, report, shots):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    name, url, records = report
    # The longest game, a forfeit, a game after an opening suite's moves and a
    # draw when there is one: every kind of start and ending.
    chosen = {max(records, key=lambda r: len(r.moves)).game_id, next(r for r in records if r.forfeit_by).game_id,
              next(r for r in records if r.opening_moves and not r.forfeit_by).game_id}
    chosen |= {r.game_id for r in records if r.winner is None or not r.moves}
    browser.get(url)
    for record in (r for r in records if r.game_id in chosen):
        browser.execute_script("document.getElementById('f-clear').click()")
        open_by_link(browser, record.game_id)
        states = positions(record)
        keys = ActionChains(browser)
        assert shown_ply(browser) == 0
        assert board(browser) == expected_board(states[0], name)
        for ply in range(1, len(states)):
            keys.send_keys(Keys.ARROW_RIGHT).perform()
            assert shown_ply(browser) == ply
            assert board(browser) == expected_board(states[ply], name), f"{record.game_id} ply {ply}"
        assert browser.current_url.endswith(f"#game={record.game_id}&ply={len(states) - 1}")
        keys.send_keys(Keys.ARROW_RIGHT).perform()  # at the end: stays
        assert shown_ply(browser) == len(states) - 1
        result = browser.find_element("id", "v-result").text
        assert result.startswith(result_text(record, detail=False)), result  # the one wording, from the data
        if record.forfeit_by:
            assert "forfeited" in result and record.detail in result
        keys.send_keys(Keys.ARROW_LEFT).perform()
        back = max(0, len(states) - 2)
        assert shown_ply(browser) == back and board(browser) == expected_board(states[back], name)
        keys.send_keys(Keys.HOME).perform()
        assert shown_ply(browser) == 0 and board(browser) == expected_board(states[0], name)
        keys.send_keys(Keys.END).perform()
        assert shown_ply(browser) == len(states) - 1 and board(browser) == expected_board(states[-1], name)
        keys.send_keys(Keys.ESCAPE).perform()
        assert not browser.find_element("id", "viewer").is_displayed()
    longest = max(records, key=lambda r: len(r.moves))
    browser.get(f"{url}#game={longest.game_id}&ply={len(longest.moves) // 2}")
    browser.save_screenshot(str(shots / f"{name}-board.png"))
    no_script_errors(browser)


def test_deep_link_opens_the_game_at_the_ply(browser, report):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    name, url, records = report
    record = next(r for r in records[1:] if len(r.moves) > 6)
    states = positions(record)
    ply = 3
    browser.get("about:blank")
    browser.get(f"{url}#game={record.game_id}&ply={ply}")
    wait_for_game(browser, record.game_id)
    assert shown_ply(browser) == ply
    assert board(browser) == expected_board(states[ply], name)
    current = browser.find_elements("css selector", "#v-moves li.current")
    assert [li.get_attribute("data-move-ply") for li in current] == [str(ply)]
    assert record.moves[ply - 1].move in browser.find_element("id", "v-move").text
    # The buttons and the slider step too.
    browser.find_element("id", "v-next").click()
    assert shown_ply(browser) == ply + 1
    browser.find_element("id", "v-first").click()
    assert shown_ply(browser) == 0
    slider = browser.find_element("id", "v-slider")
    slider.click()  # focus; the slider then moves itself with the arrow keys
    browser.execute_script("arguments[0].value = 0; arguments[0].dispatchEvent(new Event('input'))", slider)
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT).perform()
    assert shown_ply(browser) == 1
    assert board(browser) == expected_board(states[1], name)
    # An unknown game says so instead of opening.
    browser.get("about:blank")
    browser.get(f"{url}#game=nope&ply=2")
    assert not browser.find_element("id", "viewer").is_displayed()
    assert 'no game "nope"' in browser.find_element("id", "status").text
    no_script_errors(browser)


#: Counts, in window.loaded, the name of each file of games the page loads from now on.
COUNT_LOADS = ("window.loaded = []; const games = window.arenaReport.games;"
               "window.arenaReport.games = (file) => { window.loaded.push(file.name); games(file); };")


def test_a_large_reports_page_opens_a_game_from_its_file_within_3_s(browser, tmp_path):
    import time

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    records = GAMES["oxono"]
    path = tmp_path / "report.html"
    write_page(path, records, {"name": "cup", "game": "oxono", "bots": [{"name": b} for b in BOTS]}, True)
    record = records[FILE_GAMES + 2]  # in the second file
    browser.get("about:blank")
    started = time.monotonic()
    browser.get(path.as_uri())
    browser.execute_script(COUNT_LOADS)
    open_by_link(browser, record.game_id)
    assert time.monotonic() - started <= 3
    second = browser.execute_script("return JSON.parse(document.getElementById('report-data').textContent).chunks.names[1]")
    assert browser.execute_script("return window.loaded") == [second]  # its file alone
    ActionChains(browser).send_keys(Keys.END).perform()
    states = positions(record)
    assert shown_ply(browser) == len(record.moves) and board(browser) == expected_board(states[-1], "oxono")
    moves = [li.get_attribute("data-move-ply") for li in browser.find_elements("css selector", "#v-moves li")]
    assert moves == [str(ply) for ply in range(1, len(record.moves) + 1)]
    no_script_errors(browser)
    # Without its folder beside it, the page says where the games should be.
    first = next((tmp_path / "report.games").glob("0000-*.js"))
    first.unlink()
    browser.get("about:blank")
    browser.get(f"{path.as_uri()}#game={records[0].game_id}&ply=0")
    WebDriverWait(browser, 10).until(lambda d: f"Cannot load report.games/{first.name}" in d.find_element("id", "status").text)
    assert not browser.find_element("id", "viewer").is_displayed()
    browser.get_log("browser")  # the missing file's error, expected: read and dropped
    # A file that is not the one the page names is not taken for it.
    other = next((tmp_path / "report.games").glob("0001-*.js"))
    other.write_text(other.read_text().replace('"name":"', '"name":"x'))
    browser.get("about:blank")
    browser.get(f"{path.as_uri()}#game={record.game_id}&ply=0")
    WebDriverWait(browser, 10).until(lambda d: "is not this page's" in d.find_element("id", "status").text)
    assert not browser.find_element("id", "viewer").is_displayed()


def test_a_live_report_reloads_itself_and_keeps_the_view(browser, tmp_path):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from arena.results.report import LiveReport, REFRESH_S

    records = GAMES["oxono"]
    path = tmp_path / "report.html"
    live = LiveReport(path, meta_of({"name": "live cup", "game": "oxono", "bots": [{"name": b} for b in BOTS]}))
    live.update(records[:3], len(records))
    browser.get(f"{path.as_uri()}#game={records[1].game_id}&ply=2")
    assert f"live: 3 of {len(records)} games played" in browser.find_element("id", "status").text
    Select(browser.find_element("id", "f-bot")).select_by_value("ann")
    live.finish(records, len(records))
    # The page reloads within REFRESH_S seconds and shows the final report, at the
    # same game and ply, with the same filter.
    # (The status is in the page's HTML, the viewer opened by its script once loaded: wait for both.)
    # (An element read while the page reloads may be the old page's: read again.)
    WebDriverWait(browser, 6 * REFRESH_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element("id", "status").text.startswith(f"{len(records)} games; written")
        and d.find_element("id", "viewer").is_displayed())
    assert shown_ply(browser) == 2 and browser.find_element("id", "viewer").is_displayed()
    assert Select(browser.find_element("id", "f-bot")).first_selected_option.get_attribute("value") == "ann"
    shown = [tr.get_attribute("data-game") for tr in browser.find_elements("css selector", "#game-list tbody tr")]
    assert shown == [r.game_id for r in records if "ann" in r.players.values()]
    no_script_errors(browser)


#: A bot's stderr line that would be markup if the page did not show it as text.
HOSTILE = '</pre><img id="pwned" src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


@pytest.fixture(scope="module", params=[False, True], ids=["one-file", "files"])
def logged(request, tmp_path_factory) -> tuple[Path, list[GameRecord]]:
    """A results directory of oxono games with every bot's stderr in every game, and its report."""
    from arena.results.report import logs_href

    out = tmp_path_factory.mktemp("logged")
    records = GAMES["oxono"]
    for record in records:
        for name in record.players.values():
            path = out / "logs" / name / "games" / f"{record.game_id}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{name} in {record.game_id} line {i} {HOSTILE}\n" for i in range(30)))
    meta = {"name": "oxono cup", "game": "oxono", "time_control": {"initial_ms": 5000, "increment_ms": 100},
            "bots": [{"name": bot, "options": {}, "version": f"{bot}-1"} for bot in BOTS]}
    write_page(out / "report.html", records, meta, request.param, results_dir=out,
               logs_href=logs_href(out, out / "report.html"))
    write_page(out / "bot-bob.html", records, meta, request.param, results_dir=out, bot="bob")
    return out, records


def wait_for_viewer(browser) -> None:
    """The viewer opens on the hashchange event, which comes after the click returns."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "viewer").is_displayed()
                                     and d.find_elements("css selector", "#v-logs .log-line"))


def not_injected(browser) -> None:
    assert browser.title != "pwned" and not browser.find_elements("id", "pwned")


def test_a_bots_page_lists_its_games_forfeits_and_logs(browser, logged, shots):
    out, records = logged
    browser.get("about:blank")
    browser.get((out / "report.html").as_uri())
    # Each bot's page is linked from the standings.
    links = browser.find_elements("css selector", "#bot-links a")
    assert [a.text for a in links] == BOTS
    links[1].click()
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "b-name").text == "bob")
    assert browser.execute_script("return location.hash") == "#bot=bob"
    assert browser.find_element("id", "bot-page").is_displayed()
    assert not browser.find_element("id", "standings").is_displayed()
    assert browser.find_element("id", "b-name").text == "bob"
    mine = [r for r in records if "bob" in r.players.values()]
    rows = browser.find_elements("css selector", "#game-list tbody tr")
    assert [tr.get_attribute("data-game") for tr in rows] == [r.game_id for r in mine]
    # A log link per game, to the bot's file of that game.
    hrefs = [a.get_attribute("href") for a in browser.find_elements("css selector", "#game-list tbody td.log a")]
    assert hrefs == [(out / "logs" / "bob" / "games" / f"{r.game_id}.log").as_uri() for r in mine]
    # Its grade sheet: the summary and a line per round and opponent, as the report's Python made them.
    sheet = browser.execute_script("return JSON.parse(document.getElementById('report-data').textContent).sheets.bob")
    assert [li.text for li in browser.find_elements("css selector", "#b-summary li")] == sheet["summary"]
    assert sheet["summary"][0].startswith("Place: ") and sheet["games"] == len(mine)
    lines = browser.find_elements("css selector", "#b-rounds tbody tr")
    assert len(lines) == len(sheet.get("rounds") or sheet["lines"]) > 0  # a large report's: each game by its row
    assert sum(len(tr.find_elements("css selector", "td a")) for tr in lines) == len(mine)  # each game linked
    # Its results against each opponent, counted here from the records.
    table = {tr.find_element("css selector", "td").text: [td.text for td in tr.find_elements("css selector", "td")[1:5]]
             for tr in browser.find_elements("css selector", "#b-opponents tbody tr")}
    for opponent in ("ann", "cy"):
        games = [r for r in mine if opponent in r.players.values()]
        won = sum(r.winner is not None and r.players[r.winner] == "bob" for r in games)
        drawn = sum(r.winner is None for r in games)
        assert table[opponent] == [str(len(games)), str(won), str(drawn), str(len(games) - won - drawn)]
    # Its forfeits, each with what it did and the end of its stderr in that game.
    lost = [r for r in mine if r.forfeit_by is not None and r.players[r.forfeit_by] == "bob"]
    assert lost
    # (A large report's stderr ends come with their games' files.)
    WebDriverWait(browser, 10).until(lambda d: len(d.find_elements("css selector", "#b-forfeits pre.stderr")) == len(lost))
    forfeits = browser.find_elements("css selector", "#b-forfeits tbody tr")
    assert [tr.find_element("css selector", "td a").text for tr in forfeits] == [r.game_id for r in lost]
    for tr, record in zip(forfeits, lost):
        cells = tr.find_elements("css selector", "td")
        assert cells[2].text == record.reason and cells[3].text == (record.detail or "")
        tail = cells[4].find_element("css selector", "pre.stderr").text
        line = f"bob in {record.game_id} line {{}} {HOSTILE}"
        fit = 2000 // (len(line.format(10)) + 1)  # its last whole lines that fit in 2,000 characters
        assert tail == "\n".join(line.format(i) for i in range(30 - fit, 30))
    assert "Version now: bob-1" in browser.find_element("id", "b-versions").text
    browser.save_screenshot(str(shots / "bot-page.png"))
    # The viewer shows the forfeiting bot's stderr beside the forfeit, and the log links.
    forfeits[0].find_element("css selector", "td a").click()
    wait_for_viewer(browser)
    assert browser.execute_script("return location.hash").startswith(f"#bot=bob&game={lost[0].game_id}")
    shown = browser.find_element("css selector", "#v-logs pre.stderr").text.splitlines()
    assert shown[-1] == f"bob in {lost[0].game_id} line 29 {HOSTILE}"
    assert len(browser.find_elements("css selector", "#v-logs a")) == 2  # each bot's whole log
    browser.save_screenshot(str(shots / "bot-page-forfeit.png"))
    not_injected(browser)
    # Closing the viewer stays on the bot's page; the log link opens the file.
    browser.find_element("id", "v-close").click()
    assert browser.execute_script("return location.hash") == "#bot=bob"
    assert browser.find_element("id", "bot-page").is_displayed()
    browser.get(hrefs[0])
    assert f"bob in {mine[0].game_id} line 0" in browser.find_element("tag name", "body").text
    no_script_errors(browser)


def test_a_bots_own_page_has_only_its_games_and_its_stderr(browser, logged, shots):
    out, records = logged
    browser.get("about:blank")
    browser.get((out / "bot-bob.html").as_uri())
    mine = [r for r in records if "bob" in r.players.values()]
    assert browser.find_element("id", "bot-page").is_displayed()
    assert not browser.find_element("id", "b-back").is_displayed()
    assert not browser.find_elements("css selector", "table[data-table]")  # no standings
    rows = browser.find_elements("css selector", "#game-list tbody tr")
    assert [tr.get_attribute("data-game") for tr in rows] == [r.game_id for r in mine]
    assert not browser.find_elements("css selector", "#game-list td.log a")  # nothing to link to: inlined
    record = next(r for r in mine if r.forfeit_by is None)
    browser.find_element("css selector", f'#game-list tr[data-game="{record.game_id}"] a').click()
    wait_for_viewer(browser)
    blocks = browser.find_elements("css selector", "#v-logs pre.stderr")
    assert len(blocks) == 1, browser.find_element("id", "v-logs").get_attribute("innerHTML") and blocks[0].text.splitlines()[-1] == f"bob in {record.game_id} line 29 {HOSTILE}"
    other = next(n for n in record.players.values() if n != "bob")
    assert other not in browser.find_element("id", "v-logs").text  # never another team's stderr
    browser.save_screenshot(str(shots / "bot-own-page.png"))
    not_injected(browser)
    no_script_errors(browser)


def test_a_match_in_the_bracket_opens_its_games(browser, tmp_path, shots):
    """A knockout's report draws its bracket; a match's numbered game link
    opens that game in the viewer, the hostile bot's name shown as text."""
    from selenium.webdriver.support.ui import WebDriverWait

    records, meta = played_cup(*KNOCKOUT)
    path = tmp_path / "report.html"
    write_report(path, report_page(records, meta))
    browser.get("about:blank")
    browser.get(path.as_uri())
    columns = browser.find_elements("css selector", ".bracket .ko-round h4")
    assert [h.text for h in columns] == ["Quarter-finals round 1", "Semi-finals round 2", "Final round 3", "Winner"]
    winners = browser.find_elements("css selector", ".bracket .ko-round:nth-child(2) .bot.winner .name")
    assert [w.text for w in winners] == ["ann", "bob"]
    # The match decided by the seed rule: its fifth game is the second tie-break pair's first.
    match = browser.find_element("css selector", '.bracket .match[data-decided="seed"]')
    assert HOSTILE_NAME in match.text
    match.find_elements("css selector", "a.game")[4].click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "viewer").is_displayed())
    game_id = f"r2-{HOSTILE_NAME}~bob-g5"
    assert browser.find_element("id", "v-title").text.startswith(f"Game {game_id}:")
    record = next(r for r in records if r.game_id == game_id)
    assert shown_ply(browser) == 0 and board(browser) == expected_board(positions(record)[0], "oxono")
    browser.save_screenshot(str(shots / "bracket-game.png"))
    browser.find_element("id", "v-close").click()
    browser.execute_script("document.querySelector('.bracket').scrollIntoView()")
    browser.save_screenshot(str(shots / "bracket.png"))
    not_injected(browser)
    no_script_errors(browser)


#: Elements past the window's right edge that are not inside a table's scrolling box (or the
#: bracket's, or a cell that clips its text) ending within the window: a page that scrolls sideways.
OVERFLOWING = """
const boxed = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
  const o = getComputedStyle(p).overflowX;
  if (o === 'hidden' || p.classList.contains('scroll') || p.classList.contains('bracket'))
    return p.getBoundingClientRect().right <= window.innerWidth + 1; }
  return false; };
return Array.from(document.querySelectorAll('body *')).filter((e) => { const r = e.getBoundingClientRect();
  return r.width > 0 && r.right > window.innerWidth + 1 && !boxed(e); })
  .map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));"""


def test_a_report_of_100_bots_fits_a_1400_pixel_window_and_its_rating_chart_reads(browser, tmp_path, shots):
    from selenium.webdriver.support.ui import WebDriverWait

    from arena.results.report.charts import HIGHLIGHTED

    records, meta = large_cup(100, 14)
    path = tmp_path / "report.html"
    write_report(path, report_page(records, meta))
    size = browser.get_window_size()
    browser.set_window_size(1400, 1000)
    try:
        browser.get("about:blank")
        browser.get(path.as_uri())
        width = browser.execute_script("return window.innerWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        assert browser.execute_script(OVERFLOWING) == []
        # Tables wider than the window scroll in their own box; the head to head of 100 bots opens on request.
        assert browser.find_element("css selector", "details.wide table[data-table=crosstable]")
        browser.save_screenshot(str(shots / "report-100-top.png"))
        # The rating chart: the first bots of the ranking in colour, the others grey, picked out by the box.
        series = browser.find_elements("css selector", "svg.chart g.series")
        assert len(series) == 100 and len(browser.find_elements("css selector", "svg.chart g.series.other")) == 100 - HIGHLIGHTED
        browser.execute_script("document.getElementById('chart-find').scrollIntoView()")
        wanted = meta["bots"][57]["name"]
        browser.find_element("id", "chart-find").send_keys(wanted)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements("css selector", "svg.chart g.series.found"))
        found = browser.find_elements("css selector", "svg.chart g.series.found")
        assert [g.get_attribute("data-bot") for g in found] == [wanted]
        assert browser.find_element("css selector", "svg.chart text.found-label").text == wanted
        assert browser.find_element("id", "chart-found").text == "1 bot found"
        browser.save_screenshot(str(shots / "report-100-chart.png"))
        # The champion's name shows whole, not cut to "team-0…".
        assert browser.execute_script(
            "const n = document.querySelector('.ko-round.champion .name'); return n.scrollWidth <= n.clientWidth")
        # No bot's name breaks over two lines in the links to their pages.
        assert browser.execute_script(
            "return [...document.querySelectorAll('#bot-links a')].filter(a => a.getClientRects().length > 1).length") == 0
        # A team's page, opened from far down the standings, shows its top (its place and points).
        browser.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        browser.execute_script("location.hash = arguments[0]", "#bot=" + wanted)
        WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "b-name").text == wanted)
        assert browser.execute_script("return window.scrollY") == 0
        # It fits too.
        assert browser.execute_script(OVERFLOWING) == []
        assert len(browser.find_elements("css selector", "#b-rounds tbody tr")) >= 14
        no_script_errors(browser)
    finally:
        browser.set_window_size(size["width"], size["height"])
