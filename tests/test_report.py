"""The HTML report without a browser: the SVG board against the engine, the
embedded games, the tables, the charts' figures, live refreshing."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import statistics
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import pytest

import engine
from arena.formats.competition import Rules
from arena.game.positions import positions
from arena.game.records import GameRecord, MoveRecord
from arena.results.report import LiveReport, Progress, REFRESH_S, build_report, write_report
from builders import arena, assert_one_line_error, meta_of, report_page
from builders import results as read_results_of
from arena.results.report.board import board_svg, pieces_svg, square_name
from arena.results.report.charts import HIGHLIGHTED, bot_colors, move_times, quantile
from arena.results.report.data import INFO_CHARS, games_data
from arena.results.standings import compute_standings
from arena.results.sprt import SprtConfig
from arena.results.tables import render_standings, standings_notes, standings_tables
from played_games import played_games

META = {"name": "cup", "game": "oxono", "time_control": {"initial_ms": 5000, "increment_ms": 100},
        "bots": [{"name": n, "options": {}} for n in ("ann", "bob", "cy")]}

OXONO_POSITION = {
    "board": [
        ["PX", "", "", "", "", "BO"],
        ["", "TX", "", "", "", ""],
        ["", "", "PO", "", "", ""],
        ["", "", "", "BX", "", ""],
        ["", "", "", "", "TO", ""],
        ["", "", "", "", "", ""],
    ],
    "to_move": "pink", "ply": 4, "totems": {"X": "b2", "O": "e5"},
    "reserve": {"pink": {"X": 7, "O": 7}, "black": {"X": 7, "O": 7}},
}
YOXII_POSITION = {
    "board": [
        ["#", "#", "", "", "", "#", "#"],
        ["#", "", "", "", "", "", "#"],
        ["", "", "", "", "R4", "", ""],
        ["", "", "", "T", "", "", ""],
        ["", "", "W3", "W1", "", "", ""],
        ["#", "", "", "", "", "", "#"],
        ["#", "#", "", "", "", "#", "#"],
    ],
    "to_move": "red", "ply": 3, "totem": "d4",
    "reserve": {"white": {"1": 4, "2": 5, "3": 4, "4": 3}, "red": {"1": 5, "2": 5, "3": 5, "4": 2}},
}


def squares_of(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {el.get("data-square"): el for el in root.iter() if el.get("data-square")}


@pytest.mark.parametrize(("name", "position"), [("oxono", OXONO_POSITION), ("yoxii", YOXII_POSITION)])
def test_svg_board_of_a_hand_built_position_matches_the_engine(name, position):
    game = engine.get_game(name)
    state = game.from_json(position)  # the engine accepts the position as consistent
    size = len(position["board"])
    svg = board_svg(name, game.to_json(state)["board"], highlight={"c5"})
    squares = squares_of(svg)
    expected = {square_name(r, f): game.cell(state, r * size + f) for r in range(size) for f in range(size)}
    expected = {sq: code for sq, code in expected.items() if code != "#"}
    assert set(squares) == set(expected)
    assert len(squares) == {"oxono": 36, "yoxii": 37}[name]
    for square, code in expected.items():
        element = squares[square]
        assert element.get("data-piece") == (code or None), square
        use = element.find("{http://www.w3.org/2000/svg}use")
        assert use.get("href") == (f"#pc-{code}" if code else None), square
        assert ("last" in element.get("class").split()) == (square == "c5")


def test_every_cell_code_has_a_piece_symbol():
    defined = set(re.findall(r'<symbol id="pc-(\w+)"', pieces_svg()))
    codes = {"PX", "PO", "BX", "BO", "TX", "TO", "T"} | {f"{c}{v}" for c in "WR" for v in "1234"}
    assert defined == codes
    ET.fromstring(pieces_svg())  # well-formed


def embedded(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


def tables_of(page: str) -> dict[str, list[list[str]]]:
    tables = {}
    for title, key, body in re.findall(r'<h3>([^<]*)</h3><div class="scroll"><table class="data" data-table="([^"]*)">(.*?)</table>', page, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
        tables[(key, html.unescape(title))] = [
            [html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)] for row in rows
        ]
    return tables


def test_report_tables_are_the_standings_tables():
    records = played_games("oxono", ["ann", "bob", "cy"], 30, seed=1, forfeit_every=7)
    page = report_page(records, META)
    tables = tables_of(page)
    expected = standings_tables(compute_standings(records, ["ann", "bob", "cy"]))
    assert list(tables) == [(t.key, t.title) for t in expected]
    for table in expected:
        assert tables[table.key, table.title] == [table.headers, *table.rows]
    ranking = tables["ranking", "Ranking by TrueSkill rating (mu - 3·sigma)"]
    assert sorted(row[1] for row in ranking[1:]) == ["ann", "bob", "cy"]


def standings_section(page: str) -> str:
    return page.split('<nav id="bot-links" class="bot-links"></nav>\n  ')[1].split("\n</section>")[0]


@pytest.mark.parametrize("rules", [Rules(), Rules(reference=("ann",))], ids=["trueskill", "reference"])
def test_the_report_draws_the_standings_as_arena_standings_html_does(rules):
    """One template draws the standings tables, the notes under them among them, for both pages."""
    records = played_games("oxono", ["ann", "bob", "cy"], 30, seed=1, forfeit_every=7)
    read = dataclasses.replace(read_results_of(records, META), rules=rules)
    alone = render_standings(read.standings(), "html")
    body = alone.split("</h1>\n")[1].split("\n</body>")[0]
    assert standings_section(build_report(read)) == body.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
    assert body.count('<ul class="notes">') == (2 if rules.reference else 1)


def test_the_data_in_the_page_holds_nothing_that_could_end_its_script():
    """A name or an info with ``<``, ``>``, ``&`` or ``'`` is in the page's JSON as escapes, read back whole."""
    record = hostile_record()
    record.players["black"] = "b' & c > d <!-- e"
    page = report_page([record], {})
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    assert set(block) & set("<>&'") == set()
    assert embedded(page)["bots"][:2] == list(record.players.values())


def test_report_is_self_contained():
    page = report_page(played_games("yoxii", ["ann", "bob"], 4, seed=2), {**META, "game": "yoxii"})
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=", page)
    assert "<link" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "{{" not in page  # every placeholder filled


def test_embedded_games_replay_to_the_engine_positions():
    records = played_games("yoxii", ["ann", "bob", "cy"], 12, seed=3, forfeit_every=4, opening_plies=3)
    data = embedded(report_page(records, {**META, "game": "yoxii"}))
    assert data["game"] == "yoxii" and data["colors"] == ["white", "red"]
    assert [g["id"] for g in data["games"]] == [r.game_id for r in records]
    game = engine.get_game("yoxii")
    for record, entry in zip(records, data["games"]):
        assert entry["m"].split(",") == [m.move for m in record.moves]
        assert entry["t"] == [round(m.ms, 1) for m in record.moves]
        assert [data["bots"][i] for i in entry["p"]] == list(record.players.values())
        start = data["starts"][entry["s"]]
        first = positions(record)[0]
        assert start["cells"] == [c for row in game.to_json(first)["board"] for c in row]
        assert start["ply"] == len(record.opening_moves)
        opening = data["openings"][entry["o"]]
        assert opening == (f"0: {', '.join(record.opening_moves)}" if record.opening_moves else "0")
        assert entry["w"] == (None if record.winner is None else ["white", "red"].index(record.winner))
        assert entry.get("f") == (None if record.forfeit_by is None else ["white", "red"].index(record.forfeit_by))
        assert entry.get("sc") == (None if record.scores is None else [record.scores["white"], record.scores["red"]])
        # The result in words, as arena show says it; a forfeit's detail apart (the summary's "d").
        scores = f" (white {record.scores['white']}, red {record.scores['red']})" if record.scores else ""
        if record.winner is None:
            words = f"draw by {record.reason}{scores}"
        elif record.forfeit_by is not None:
            words = (f"{record.winner} ({record.players[record.winner]}) wins; {record.forfeit_by} "
                     f"({record.players[record.forfeit_by]}) forfeited by {record.reason}")
        else:
            words = f"{record.winner} ({record.players[record.winner]}) wins by {record.reason}{scores}"
        assert entry["rt"] == words


def hostile_record() -> GameRecord:
    record = played_games("oxono", ["a", "b"], 1, seed=4)[0]
    record.players = {"pink": "</script><script>alert(1)</script>", "black": "b<!--"}
    record.moves[0] = MoveRecord(record.moves[0].move, 1.0, {"note": "</script>" + "x" * 5000})
    return record


def test_names_and_info_cannot_break_out_of_the_page():
    record = hostile_record()
    page = report_page([record], {})
    assert "<script>alert(1)" not in page
    assert page.count("</script>") == 2  # the data block's and the viewer's
    data = embedded(page)
    assert data["bots"][:2] == list(record.players.values())
    note = data["games"][0]["n"]["1"]
    assert len(note) == INFO_CHARS and note.endswith("…") and note.startswith('{"note": "</script>xxx')


def test_games_data_lists_bots_that_only_appear_in_records():
    records = played_games("oxono", ["ann", "zed"], 2)
    data = games_data(engine.get_game("oxono"), records, ["ann"])
    assert data["bots"] == ["ann", "zed"]


def test_rating_history_follows_the_schedule_and_ends_at_the_standings():
    records = played_games("oxono", ["ann", "bob", "cy"], 24, seed=5, forfeit_every=5)
    standings = compute_standings(reversed(records))  # the fold follows the schedule, not the input order
    first = compute_standings(records[:1])
    for bot in standings.bots:
        games, mu, sigma = bot.history[-1]
        assert (games, mu, sigma) == (bot.games, bot.mu, bot.sigma)
        assert [g for g, _, _ in bot.history] == list(range(1, bot.games + 1))
    for bot in first.bots:
        assert next(b for b in standings.bots if b.name == bot.name).history[0] == (1, bot.mu, bot.sigma)


def test_move_times_and_quantiles():
    records = played_games("oxono", ["ann", "bob"], 6, seed=6, opening_plies=3)
    times = move_times(records)
    for name in ("ann", "bob"):
        # After an opening of 3 moves, the second seat makes the bots' first move.
        expected = sorted(m.ms for r in records for ply, m in enumerate(r.moves)
                          if list(r.players.values())[(ply + len(r.opening_moves)) % 2] == name)
        assert times[name] == expected
        quartiles = statistics.quantiles(expected, n=4, method="inclusive")
        assert [quantile(expected, q) for q in (0.25, 0.5, 0.75)] == pytest.approx(quartiles)
    assert quantile([1.0, 2.0, 3.0, 10.0], 0.95) == pytest.approx(3 + 7 * 0.85)


def test_charts_have_a_series_per_bot():
    records = played_games("oxono", ["ann", "bob", "cy"], 12, seed=7, forfeit_every=3)
    page = report_page(records, META)
    for kind in ("series", "bar", "box"):
        assert sorted(re.findall(rf'<g class="{kind}" data-bot="([^"]*)"', page)) == ["ann", "bob", "cy"], kind


def test_report_without_games():
    page = report_page([], META)
    assert "No games played yet" in page
    assert embedded(page)["games"] == []


def status_of(page: str) -> str:
    return re.search(r'<p id="status" class="status (\w+)">', page).group(1)


def test_live_report_refreshes_at_most_every_few_seconds(tmp_path):
    now = [100.0]
    path = tmp_path / "report.html"
    live = LiveReport(path, meta_of(META), clock=lambda: now[0])
    records = played_games("oxono", ["ann", "bob"], 3, seed=8)
    assert live.update(records[:1], 3)
    page = path.read_text()
    assert status_of(page) == "live" and "1 of 3 games played" in page and embedded(page)["live"] is True
    now[0] += REFRESH_S / 2
    assert not live.update(records[:2], 3)
    assert len(embedded(path.read_text())["games"]) == 1
    now[0] += REFRESH_S
    assert live.update(records[:2], 3)
    assert len(embedded(path.read_text())["games"]) == 2
    live.finish(records, 3)
    page = path.read_text()
    assert status_of(page) == "final" and embedded(page)["live"] is False and len(embedded(page)["games"]) == 3
    assert '"status final">3 games; written' in page
    live.finish(records[:2], 3)  # a run stopped early
    assert "2 of 3 games played: the run stopped (run it again to resume)" in path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left


def test_live_report_that_cannot_be_written_keeps_one_error(tmp_path):
    live = LiveReport(tmp_path / "missing" / "report.html", meta_of(META))
    assert not live.update([], 4)
    assert "cannot write the report" in live.error and "missing" in live.error
    live.finish([], 4)  # no second attempt, no exception


def test_write_report_replaces_atomically(tmp_path):
    path = tmp_path / "r.html"
    write_report(path, "old")
    write_report(path, "new")
    assert path.read_text() == "new" and len(list(tmp_path.iterdir())) == 1


def test_report_states_when_it_was_written():
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    page = report_page(played_games("oxono", ["ann", "bob"], 2), {**META, "description": "a <b> ladder"}, now=when)
    assert "2 games; written 2026-01-02 03:04:05 UTC" in page
    assert '<p class="description">a &lt;b&gt; ladder</p>' in page
    assert "time control 5+0.1" in page


def test_report_shows_the_sprt_and_the_legend_like_arena_standings():
    sprt = SprtConfig(elo0=0, elo1=200)
    records = played_games("oxono", ["ann", "bob"], 40, seed=12)
    meta = {**META, "bots": META["bots"][:2]}
    page = report_page(records, meta, sprt=sprt)
    standings = compute_standings(records, ["ann", "bob"], Rules(sprt=sprt))
    tables = tables_of(page)
    for table in standings_tables(standings):
        assert tables[table.key, table.title] == [table.headers, *table.rows]
    assert [key for key, _ in tables] == ["ranking", "match", "sprt", "crosstable", "colors"]
    notes = re.search(r'<ul class="notes">(.*?)</ul>', page, re.S).group(1)
    assert [html.unescape(n) for n in re.findall(r"<li>(.*?)</li>", notes)] == standings_notes(standings)


def test_report_of_a_run_stopped_by_the_sprt_says_so():
    records = played_games("oxono", ["ann", "bob"], 40, seed=12)
    for record in records:  # ann wins every game: the test is soon decided
        record.winner = next(color for color, name in record.players.items() if name == "ann")
    meta = {**META, "bots": META["bots"][:2]}
    sprt = SprtConfig(elo0=0, elo1=200)
    assert compute_standings(records, ["ann", "bob"], Rules(sprt=sprt)).sprt.verdict == "H1"
    page = report_page(records, meta, sprt=sprt, progress=Progress(40, 400))
    assert "40 of 400 games played: the SPRT is decided" in page
    assert "H1 accepted" in page
    page = report_page(records[:2], meta, sprt=sprt, progress=Progress(2, 400))
    assert "2 of 400 games played: the run stopped" in page


def test_an_sprt_report_draws_the_llr_pair_by_pair_up_to_its_verdict():
    records = played_games("oxono", ["ann", "bob"], 40, seed=12)
    for record in records:  # ann wins every game: decided after a few pairs
        record.winner = next(color for color, name in record.players.items() if name == "ann")
    meta = {**META, "bots": META["bots"][:2]}
    sprt = SprtConfig(elo0=0, elo1=200)
    pairs = compute_standings(records, ["ann", "bob"], Rules(sprt=sprt)).sprt.pairs
    page = report_page(records, meta, sprt=sprt)
    chart = re.search(r'<polyline class="llr" data-pairs="(\d+)" points="([^"]*)"', page)
    assert chart is not None and int(chart[1]) == pairs < 20  # up to the deciding pair, not the 20 played
    ys = [float(point.split(",")[1]) for point in chart[2].split()]
    assert len(ys) == pairs + 1 and ys == sorted(ys, reverse=True)  # every win takes the LLR up (SVG y grows down)
    assert f"H1 accepted ({sprt.upper:.2f})" in page and f"H0 accepted ({sprt.lower:.2f})" in page
    assert 'class="llr"' not in report_page(records, meta)


# -- where a report may be written (arena report -o) -------------------------------


@pytest.fixture
def results(tmp_path):
    """A results directory: its games, tournament.json, archive, a log and a scratch directory."""
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    (out / "scratch" / "a.w1").mkdir(parents=True)
    records = played_games("oxono", ["ann", "bob", "cy"], 6, seed=2)
    (out / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records))
    (out / "tournament.json").write_text(json.dumps(META))
    (out / "logs" / "ann.log").write_text("ann's stderr\n")
    return out


def files(directory):
    """The directory's files, less the index of games.jsonl that reading it brings up to date."""
    return {p: p.read_bytes() for p in directory.rglob("*") if p.is_file() and not p.name.startswith("index.sqlite")}


@pytest.mark.parametrize("name", ["games.jsonl", "tournament.json", "replaced.jsonl", ".lock", "index.sqlite", "logs/ann.log",
                                  "logs/new.html", "scratch/a.w1/r.html", "scratch/new/r.html"])
@pytest.mark.parametrize("force", [False, True])
def test_a_report_is_never_written_over_a_file_of_a_results_directory(results, name, force):
    before = files(results)
    args = ["report", results, "-o", results / name] + (["--force"] if force else [])
    assert_one_line_error(arena(*args), f"{results / name} is part of the results in {results}", "name another file with -o")
    assert files(results) == before


def test_a_link_to_a_results_file_is_refused_too(results, tmp_path):
    (tmp_path / "r.html").symlink_to(results / "games.jsonl")
    before = files(results)
    assert_one_line_error(arena("report", results, "-o", tmp_path / "r.html"), "is part of the results in")
    assert files(results) == before


def test_an_existing_file_that_is_not_html_needs_force(results, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert_one_line_error(arena("report", results, "-o", notes), "notes.txt exists and is not an HTML page", "--force")
    assert notes.read_text() == "my notes\n"
    assert arena("report", results, "-o", notes, "--force").exit_code == 0
    assert notes.read_text().startswith("<!DOCTYPE html>")
    # An earlier report, and the results directory's own report.html, are simply replaced.
    old = tmp_path / "old.html"
    old.write_text("<!doctype html><p>last week</p>")
    assert arena("report", results, "-o", old).exit_code == 0 and "last week" not in old.read_text()
    assert arena("report", results).exit_code == 0 and (results / "report.html").exists()


# -- a bot's stderr beside its forfeits, and a bot's own page ---------------------------


def logged_results(tmp_path):
    """Records with forfeits, and a log of every bot in every game whose lines name the bot and the game."""
    records = played_games("oxono", ["ann", "bob", "cy"], 12, seed=5, forfeit_every=3)
    for record in records:
        record.versions = {color: f"{name}-v{1 + record.index % 2}" for color, name in record.players.items()}
        for name in record.players.values():
            path = tmp_path / "logs" / name / "games" / f"{record.game_id}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [f"=== game {record.game_id}: bot {name}, started 2026-11-23T17:00:00.000Z (arena clock, UTC) ==="]
            lines += [f"{name} in {record.game_id} line {i} </pre><script>alert(1)</script>" for i in range(40)]
            path.write_text("\n".join(lines) + "\n")
    return records


def test_a_forfeit_carries_the_end_of_the_forfeiting_bots_stderr_only(tmp_path):
    records = logged_results(tmp_path)
    data = embedded(report_page(records, META, results_dir=tmp_path, logs_href="logs/"))
    assert data["logs_href"] == "logs/" and data["only_bot"] is None
    forfeits = 0
    for record, entry in zip(records, data["games"]):
        if record.forfeit_by is None:
            assert "e" not in entry
            continue
        forfeits += 1
        seat = list(record.players).index(record.forfeit_by)
        name = record.players[record.forfeit_by]
        assert entry["e"][1 - seat] is None
        assert entry["e"][seat].splitlines() == [
            f"{name} in {record.game_id} line {i} </pre><script>alert(1)</script>" for i in range(20, 40)]
    assert forfeits == 4
    # The page itself holds no markup from a bot: its lines are JSON text, shown as text.
    page = report_page(records, META, results_dir=tmp_path)
    assert "<script>alert(1)" not in page and page.count("</script>") == 2
    # Without a results directory (records only), no stderr at all.
    assert all("e" not in g for g in embedded(report_page(records, META))["games"])


def test_a_bots_page_holds_its_games_its_stderr_and_its_versions_only(tmp_path):
    records = logged_results(tmp_path)
    page = report_page(records, {**META, "bots": [{"name": n, "options": {}, "version": f"{n}-v9"} for n in ("ann", "bob", "cy")]},
                        results_dir=tmp_path, logs_href="logs/", bot="bob")
    data = embedded(page)
    mine = [r for r in records if "bob" in r.players.values()]
    assert [g["id"] for g in data["games"]] == [r.game_id for r in mine] and len(mine) == 8
    assert data["only_bot"] == "bob" and data["logs_href"] is None  # one file for a team: nothing to link to
    for record, entry in zip(mine, data["games"]):
        seat = list(record.players.values()).index("bob")
        assert entry["e"][1 - seat] is None  # never the other team's stderr
        assert entry["e"][seat].splitlines()[-1] == f"bob in {record.game_id} line 39 </pre><script>alert(1)</script>"
    played = {"bob-v1": sum(r.index % 2 == 0 for r in mine), "bob-v2": sum(r.index % 2 == 1 for r in mine)}
    assert data["versions"]["bob"] == {"now": "bob-v9", "played": played}
    # No standings or charts of the whole tournament on a team's page.
    assert tables_of(page) == {} and 'id="standings" hidden' in page and 'id="charts" hidden' in page
    assert "<h1>cup: bob</h1>" in page


def test_arena_report_bot_writes_one_page(tmp_path):
    out = tmp_path / "out"
    records = logged_results(out)
    (out / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records))
    (out / "tournament.json").write_text(json.dumps(META))
    result = arena("report", out, "--bot", "cy")
    assert result.exit_code == 0, result.err
    page = (out / "bot-cy.html").read_text()
    assert result.err.strip() == f"page of cy of 8 games written to {out / 'bot-cy.html'}"
    assert {g["id"] for g in embedded(page)["games"]} == {r.game_id for r in records if "cy" in r.players.values()}
    full = arena("report", out)
    assert full.exit_code == 0 and embedded((out / "report.html").read_text())["logs_href"] == "logs/"
    (tmp_path / "x").mkdir()
    elsewhere = arena("report", out, "-o", tmp_path / "x" / "r.html")
    assert elsewhere.exit_code == 0 and embedded((tmp_path / "x" / "r.html").read_text())["logs_href"] == "../out/logs/"
    assert_one_line_error(arena("report", out, "--bot", "nobody"), f"no bot 'nobody' in {out}; its bots: ann, bob, cy")


def test_no_log_links_for_results_without_their_logs(tmp_path):
    from arena.results.report import logs_href

    assert logs_href(tmp_path, tmp_path / "report.html") is None
    (tmp_path / "logs").mkdir()
    assert logs_href(tmp_path, tmp_path / "report.html") == "logs/"
    assert logs_href(tmp_path, tmp_path / "sub" / "r.html") == "../logs/"


def test_no_bot_drawn_in_colour_is_grey_like_the_others():
    # The course's 8th bot (c-oxono-1) was drawn in grey among the field's grey lines.
    colours = list(bot_colors([f"b{i}" for i in range(HIGHLIGHTED + 2)]).values())
    highlighted, others = colours[:HIGHLIGHTED], colours[HIGHLIGHTED:]
    assert len(set(others)) == 1 and others[0] not in highlighted
    greys = [c for c in highlighted if len({c[1:3], c[3:5], c[5:7]}) == 1]
    assert greys == []


# -- a large report: its games' moves in files beside the page -------------------------


def games_files(folder) -> list[dict]:
    """The files of games in ``folder``, in order, as the page's script receives them."""
    out = []
    for path in sorted(p for p in folder.iterdir() if p.suffix == ".js"):
        seal, _, text = path.read_text().partition("\n")
        assert re.fullmatch(r"// arena [0-9a-f]{128}", seal), seal  # this user's arena wrote it
        assert text.startswith("arenaReport.games(") and text.endswith(");\n") and "<" not in text
        out.append(json.loads(text[len("arenaReport.games("):-3]))
    return out


def large_report(records, tmp_path, **options):
    from arena.results.report import build_report_files
    from builders import results

    path = tmp_path / "report.html"
    page, games = build_report_files(results(records, META), "report.games/", inline_games=0, chunk_games=5, **options)
    write_report(path, page, games)
    return path, embedded(page), games


def test_a_large_report_holds_the_list_and_its_games_moves_are_in_files_beside_it(tmp_path):
    records = played_games("oxono", ["ann", "bob", "cy"], 12, seed=5, forfeit_every=3)
    path, data, games = large_report(records, tmp_path)
    assert "games" not in data and len(data["list"]["id"]) == len(records)
    page = path.read_text()
    assert not any(",".join(m.move for m in r.moves[:3]) in page for r in records if len(r.moves) > 3)
    files = games_files(tmp_path / "report.games")
    assert data["chunks"]["starts"] == list(range(0, len(records), 5)) and [len(f["games"]) for f in files] == [5, 5, 2]
    assert [f["name"] for f in files] == data["chunks"]["names"] == sorted(p.name for p in (tmp_path / "report.games").iterdir())
    bodies = [body for f in files for body in f["games"]]
    inline = games_data(engine.get_game("oxono"), records, ["ann", "bob", "cy"])["games"]
    # Each game's body is what a small report holds of it beside its summary.
    assert [{k: g[k] for k in ("m", "t", "n", "e", "rt") if k in g} for g in inline] == bodies
    assert data["list"]["l"] == [len(r.moves) for r in records]
    assert sorted(int(row) for row in data["list"]["extra"]) == [n for n, r in enumerate(records) if r.forfeit_by]
    # Written again, a file of the same games is kept as it is; one whose games changed is named anew.
    folder = tmp_path / "report.games"
    inodes = {p.name: p.stat().st_ino for p in folder.iterdir()}
    assert len(records[-1].moves) > 1
    records[-1] = dataclasses.replace(records[-1], moves=records[-1].moves[:-1])
    _, changed, _ = large_report(records, tmp_path)
    assert changed["chunks"]["names"][:-1] == data["chunks"]["names"][:-1] != changed["chunks"]["names"]
    assert {p.name: p.stat().st_ino for p in folder.iterdir() if p.name in inodes} == {
        name: inodes[name] for name in data["chunks"]["names"][:-1]}
    assert games_files(folder)[-1]["games"][-1]["m"] == ",".join(m.move for m in records[-1].moves)
    # A file planted under a kept file's name (it would run as the page's script) is not kept: written anew.
    planted = folder / data["chunks"]["names"][0]
    planted.unlink()
    planted.write_text("// arena " + "0" * 128 + "\nalert('planted');\n")
    large_report(records, tmp_path)
    assert "planted" not in planted.read_text() and games_files(folder)[0]["games"] == files[0]["games"]
    # With fewer files: those it no longer names go, anything else in the folder stays.
    (folder / "notes.txt").write_text("mine")
    from arena.results.report import build_report_files
    from builders import results
    page, fewer = build_report_files(results(records, META), "report.games/", inline_games=0, chunk_games=100)
    write_report(path, page, fewer)
    assert sorted(p.name for p in folder.iterdir()) == [fewer.names[0], "notes.txt"]


def test_a_file_of_games_holds_what_its_name_says_wherever_its_games_are_in_the_list():
    from arena.results.report.data import game_list

    game = engine.get_game("oxono")
    records = played_games("oxono", ["ann", "bob", "cy"], 12, seed=5)
    early, late = records[1], records[2:]
    # Files of about two games' moves: the one a game joins takes it without moving the later files' first games.
    plies = len(records[2].moves) + len(records[3].moves)
    _, before = game_list(game, [records[0], *late], ["ann", "bob", "cy"], chunk_plies=plies)
    _, after = game_list(game, records, ["ann", "bob", "cy"], chunk_plies=plies)
    kept = set(before.names) & set(after.names)
    assert kept and before.starts != after.starts[:len(before.starts)]
    for name in kept:
        assert before.script(before.names.index(name)) == after.script(after.names.index(name))


def test_a_small_report_is_one_file():
    from arena.results.report import build_report_files
    from builders import results

    records = played_games("oxono", ["ann", "bob", "cy"], 6, seed=5)
    page, games = build_report_files(results(records, META), "report.games/", inline_games=len(records))
    assert games is None and len(embedded(page)["games"]) == len(records)


def test_a_large_teams_page_and_its_files_hold_no_other_bots_stderr_detail_or_info(tmp_path):
    records = logged_results(tmp_path)
    for record in records:
        record.moves = [MoveRecord(m.move, m.ms, {"by": record.players[list(record.players)[ply % 2]]})
                        for ply, m in enumerate(record.moves)]
    _, data, games = large_report(records, tmp_path, results_dir=tmp_path, bot="bob")
    mine = [r for r in records if "bob" in r.players.values()]
    bodies = [body for f in games_files(tmp_path / "report.games") for body in f["games"]]
    assert len(bodies) == len(mine) == len(data["list"]["id"])
    for record, body in zip(mine, bodies):
        seat = list(record.players.values()).index("bob")
        assert body["e"][1 - seat] is None and body["e"][seat].splitlines()[-1].startswith(f"bob in {record.game_id}")
        assert set(body.get("n", {}).values()) <= {'{"by": "bob"}'} and len(body["n"]) == (len(record.moves) + 1 - seat) // 2
    details = {row: extra.get("d") for row, extra in data["list"]["extra"].items()}
    forfeited = {str(n): r.players[r.forfeit_by] for n, r in enumerate(mine) if r.forfeit_by}
    assert forfeited and set(details) == set(forfeited)
    assert all((details[row] is not None) == (by == "bob") for row, by in forfeited.items())


def test_a_large_page_is_built_without_reading_a_games_moves(tmp_path):
    from arena.results.report import build_report_files
    from arena.results.store import StoreError
    from arena.run.results_dir import read_results

    records = played_games("oxono", ["ann", "bob", "cy"], 12, seed=5)
    (tmp_path / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records))
    (tmp_path / "tournament.json").write_text(json.dumps(META))
    results = read_results(tmp_path)
    (tmp_path / "games.jsonl").write_bytes(b"")  # any game's moves read from now on are missing
    page, games = build_report_files(results, "report.games/", inline_games=0, chunk_games=5)
    assert len(embedded(page)["list"]["id"]) == len(records)
    with pytest.raises(StoreError, match="is no longer in"):
        games.script(0)
    # Read for a file, a game's moves are not kept in its record: the records of every file would hold them all.
    (tmp_path / "games.jsonl").write_bytes(b"".join(r.to_line() for r in records))
    assert games.script(0).count('"m":') == 5
    (tmp_path / "games.jsonl").write_bytes(b"")
    with pytest.raises(StoreError, match="is no longer in"):
        list(results.records[0].moves)


def test_a_large_reports_games_are_written_through_no_link(results, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "r.games").symlink_to(elsewhere)
    assert_one_line_error(arena("report", results, "-o", tmp_path / "r.html"), "r.games is a link", "never through a link")
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "r.html").exists()
    # Planted after the check: writing refuses it as well.
    from arena.base.safe_files import RefusedFile

    records = played_games("oxono", ["ann", "bob", "cy"], 6, seed=5)
    (tmp_path / "report.games").symlink_to(elsewhere)
    with pytest.raises(RefusedFile):
        large_report(records, tmp_path)
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "report.html").exists()
    # A link planted at a file's own name is replaced by the file, not kept for it.
    (tmp_path / "report.games").unlink()
    _, data, _ = large_report(records, tmp_path)
    planted = tmp_path / "report.games" / data["chunks"]["names"][0]
    planted.unlink()
    (elsewhere / "x.js").write_text("alert(1)")
    planted.symlink_to(elsewhere / "x.js")
    large_report(records, tmp_path)
    assert not planted.is_symlink() and planted.read_text().partition("\n")[2].startswith("arenaReport.games(")
    assert (elsewhere / "x.js").read_text() == "alert(1)"
    assert_one_line_error(arena("report", results, "-o", tmp_path / "x.games"), "cannot end with .games")


def test_the_bots_with_a_protocol_log_are_named_for_their_pages_links(tmp_path):
    records = logged_results(tmp_path)
    last = [r for r in records if "cy" in r.players.values()][-1]
    (tmp_path / "logs" / "cy" / "games" / f"{last.game_id}.protocol.log").write_text("=== game ===\n")
    assert embedded(report_page(records, META, results_dir=tmp_path, logs_href="logs/"))["protocol_bots"] == ["cy"]
    # Without the logs linked (a team's own page), none.
    assert embedded(report_page(records, META, results_dir=tmp_path, logs_href="logs/", bot="cy"))["protocol_bots"] == []
