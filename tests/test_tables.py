"""Tests for arena.results.tables: the three tables in every format."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from arena.formats.competition import Rules
from arena.game.records import GameRecord, MoveRecord
from arena.results.standings import BotStanding, Standings, compute_standings
from arena.results.sprt import SprtConfig, sprt_llr
from arena.results.statistics import fit_elo, match_statistics, scores_of
from arena.results.tables import LEGEND, OUTPUT_FORMATS, render_standings
from builders import record


def game(index: int, white: str, red: str, winner: str | None, *, forfeit: str | None = None) -> GameRecord:
    """A finished YOXII game; ``forfeit`` is the reason the loser forfeited."""
    loser = None if winner is None else ("red" if winner == "white" else "white")
    return record(index, white, red, winner, game="yoxii", time_control={"initial_ms": 5000, "increment_ms": 50},
                  moves=[MoveRecord(move="d5 3e6", ms=12.0), MoveRecord(move="d6 1e5", ms=8.0)],
                  reason=forfeit or "blocked", forfeit_by=loser if forfeit else None)


# "ace" scores 3.5/4 against "<b>old", which also loses twice on forfeit
# to "cat"; the odd name checks escaping in HTML and Markdown.
GAMES = [
    game(0, "ace", "<b>old", "white"),
    game(1, "<b>old", "ace", "red"),
    game(2, "ace", "<b>old", None),
    game(3, "<b>old", "ace", "red"),
    game(4, "cat", "<b>old", "white", forfeit="timeout"),
    game(5, "<b>old", "cat", "red", forfeit="crash"),
    game(6, "cat", "<b>old", "white", forfeit="timeout"),
    game(7, "ace", "cat", "white"),
]


@pytest.fixture
def standings() -> Standings:
    return compute_standings(GAMES, bot_names=["ace", "cat", "<b>old", "idle"])


def test_plain_shows_the_three_tables(standings):
    text = render_standings(standings)
    assert text.startswith("YOXII standings after 8 games")
    lines = text.splitlines()
    ranking = lines.index("Ranking by TrueSkill rating (mu - 3·sigma)")
    rows = [line.split() for line in lines[ranking + 3 : ranking + 7]]
    # rank, bot, rating (mu - 3 sigma, one decimal), ... in ranking order.
    assert [row[1] for row in rows] == [b.name for b in standings.bots]
    ace = standings.bots[0]
    assert ace.name == "ace"
    assert rows[0][:3] == ["1", "ace", f"{ace.mu - 3 * ace.sigma:.1f}"]
    assert rows[0][5:10] == ["5", "4", "1", "0", "90.0"]
    assert "timeout 2, crash 1" in text
    assert "Head to head (row's score against column)" in text
    h2h = lines[lines.index("Head to head (row's score against column)") + 3].split()
    assert h2h[:3] == ["ace", "—", "1/1"] and "3.5/4" in h2h
    # 8 games in all, each counted once per colour: the total is in the title, not on both rows
    colours = text[text.index("Results by colour") :].splitlines()
    assert colours[0] == "Results by colour (8 games)"
    assert colours[1].split() == ["colour", "wins", "draws", "losses", "score", "%"]
    assert colours[3].split() == ["white", "4", "1", "3", "56.2"]
    assert colours[4].split() == ["red", "3", "1", "4", "43.8"]


def test_forfeits_show_dash_when_none(standings):
    lines = render_standings(standings).splitlines()
    ace_row = next(line for line in lines if line.split()[1:2] == ["ace"])
    assert ace_row.split()[14] == "-"  # after Elo, ±, "≈" and the LOS


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_every_format_names_every_bot(standings, fmt):
    text = render_standings(standings, fmt)
    for bot in ("ace", "cat", "idle"):
        assert bot in text
    # Markdown passes raw HTML, so github escapes it as html does.
    assert ("&lt;b&gt;old" if fmt in ("html", "github") else "<b>old") in text


def test_github_is_markdown(standings):
    text = render_standings(standings, "github")
    assert text.startswith("# YOXII standings")
    assert "## Ranking by TrueSkill rating (mu - 3·sigma)" in text and "## Results by colour" in text
    assert "| ace " in text


def test_html_is_a_standalone_page(standings):
    text = render_standings(standings, "html")
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>")
    assert text.count("<table ") == text.count("</table>") == 3
    assert "<style>" in text and "<h2>Ranking by TrueSkill rating (mu - 3·sigma)</h2>" in text
    assert "<b>old" not in text


def test_json_holds_every_field(standings):
    data = json.loads(render_standings(standings, "json"))
    assert data["game"] == "yoxii" and data["total_games"] == 8
    assert [b["name"] for b in data["bots"]] == [b.name for b in standings.bots]
    first, bot = data["bots"][0], standings.bots[0]
    assert first["rank"] == 1
    assert first["rating"] == pytest.approx(bot.mu - 3 * bot.sigma)
    assert (first["mu"], first["sigma"]) == (bot.mu, bot.sigma)
    assert (first["wins"], first["draws"], first["losses"], first["score_pct"]) == (4, 1, 0, 90.0)
    assert (first["moves"], first["move_ms"], first["mean_move_ms"]) == (5, 52.0, pytest.approx(10.4))
    old = next(b for b in data["bots"] if b["name"] == "<b>old")
    assert old["forfeits"] == {"timeout": 2, "crash": 1}
    idle = next(b for b in data["bots"] if b["name"] == "idle")
    assert idle["games"] == 0 and idle["score_pct"] is None and idle["mean_move_ms"] is None
    assert data["crosstable"]["ace"]["<b>old"] == {"score": 3.5, "games": 4}
    assert data["crosstable"]["<b>old"]["ace"] == {"score": 0.5, "games": 4}
    assert data["by_color"]["white"] == {"games": 8, "wins": 4, "draws": 1, "losses": 3, "score_pct": 56.25}


def test_csv_is_one_table_the_ranking_by_default(standings):
    ranking = list(csv.reader(io.StringIO(render_standings(standings, "csv"))))
    # one header row, then one row per bot, every row as wide as the header
    assert ranking[0][:2] == ["#", "bot"]
    assert {len(row) for row in ranking} == {len(ranking[0])}
    assert [r[1] for r in ranking[1:]] == [b.name for b in standings.bots]
    old = next(r for r in ranking[1:] if r[1] == "<b>old")
    assert old[ranking[0].index("forfeits")] == "timeout 2, crash 1"


def test_csv_other_tables_on_request(standings):
    h2h = list(csv.reader(io.StringIO(render_standings(standings, "csv", table="crosstable"))))
    assert h2h[0] == ["bot", *(b.name for b in standings.bots)]
    assert len(h2h) == 1 + len(standings.bots)
    colours = list(csv.reader(io.StringIO(render_standings(standings, "CSV", table="Colors"))))
    assert colours == [["colour", "wins", "draws", "losses", "score %"],
                       ["white", "4", "1", "3", "56.25"], ["red", "3", "1", "4", "43.75"]]  # plain numbers


def test_one_table_alone_in_a_text_format(standings):
    text = render_standings(standings, "plain", table="colors")
    assert text.splitlines()[2] == "Results by colour (8 games)"
    assert "Ranking" not in text and "Head to head" not in text
    with pytest.raises(ValueError, match="ranking, rounds, settling, bracket, reference, opponents, match, sprt, crosstable, colors"):
        render_standings(standings, "plain", table="elo")
    with pytest.raises(ValueError, match="json holds every table"):
        render_standings(standings, "json", table="colors")


def test_unknown_format_names_the_choices(standings):
    with pytest.raises(ValueError, match="plain, github, html, csv, json"):
        render_standings(standings, "xlsx")


@pytest.mark.parametrize("fmt", ["plain", "github", "html"])
def test_no_games_gives_a_friendly_line(fmt):
    text = render_standings(compute_standings([], bot_names=["ace", "cat"]), fmt)
    assert "No games played yet (2 bots entered: ace, cat)." in text
    assert "No games played yet." in render_standings(compute_standings([]), fmt)


def test_no_games_keeps_machine_formats_parseable():
    empty = compute_standings([], bot_names=["ace"])
    data = json.loads(render_standings(empty, "json"))
    assert data["total_games"] == 0 and data["game"] is None and data["bots"][0]["name"] == "ace"
    rows = list(csv.reader(io.StringIO(render_standings(empty, "csv"))))
    assert rows[0][:2] == ["#", "bot"] and rows[1][1] == "ace"


def test_rating_just_below_zero_shows_no_negative_zero():
    bot = BotStanding("ace", mu=1.0, sigma=0.35, wins=1)
    lone = Standings(game="oxono", bots=[bot], crosstable={"ace": {}}, by_color={}, total_games=1)
    row = next(line for line in render_standings(lone).splitlines() if " ace " in line)
    assert row.split()[2] == "0.0"


# -- Elo, LOS, legend, match and SPRT ------------------------------------------------


def test_ranking_shows_elo_margin_and_los_from_the_fit(standings):
    fit = fit_elo([(r.players["white"], r.players["red"], {"white": 1.0, "red": 0.0, None: 0.5}[r.winner])
                   for r in GAMES])
    ace, cat, old, idle = standings.bots
    assert (ace.elo, ace.elo_margin) == (pytest.approx(fit.elo["ace"]), pytest.approx(fit.margin("ace")))
    assert ace.los_next == pytest.approx(fit.los("ace", "cat"))
    assert old.los_next is None and idle.elo is None  # the last bot with games; a bot without games
    text = render_standings(standings)
    row = next(line for line in text.splitlines() if line.split()[1:2] == ["ace"]).split()
    assert row[10:14] == [f"{round(fit.elo['ace']):+d}", f"{round(fit.margin('ace'))}", "≈", f"{100 * ace.los_next:.1f}%"]
    for line in LEGEND:
        assert f"  {line}" in text
    assert text.index("LOS: likelihood") < text.index("Head to head")


def test_a_los_of_95_percent_or_more_is_not_marked():
    records = [game(i, "a", "b", "white" if i < 40 else "red") for i in range(42)]  # a wins 40 of 42
    text = render_standings(compute_standings(records, ["a", "b"]))
    row = next(line for line in text.splitlines() if line.split()[1:2] == ["a"]).split()
    assert row[12].endswith("%") and "≈" not in row


def test_two_bots_get_a_match_table_and_the_sprt(tmp_path):
    # Pairs: a wins both, a wins one of two, a draws both.
    records = [game(0, "a", "b", "white"), game(1, "b", "a", "red"), game(2, "a", "b", "white"),
               game(3, "b", "a", "white"), game(4, "a", "b", None), game(5, "b", "a", None)]
    for record in records:
        record.pair = record.index // 2
    table = compute_standings(records, ["a", "b"], Rules(sprt=SprtConfig(0, 5)))
    assert table.match_bots == ("a", "b")
    assert table.match.penta.counts() == (0, 0, 2, 0, 1)
    assert table.sprt.pairs == 3 and table.sprt.llr == pytest.approx(sprt_llr(table.match.penta, 0, 5))
    text = render_standings(table)
    assert "Match: a against b (from a's side; Elo diff: a's Elo minus b's)" in text and "SPRT (normalized Elo, game pairs)" in text
    data = json.loads(render_standings(table, "json"))
    assert data["match"]["pentanomial"] == {"LL": 0, "LD": 0, "WL": 1, "DD": 1, "WD": 0, "WW": 1}
    assert data["sprt"]["verdict"] == "undecided" and data["sprt"]["pairs"] == 3
    # csv: one table each, on request
    match = list(csv.reader(io.StringIO(render_standings(table, "csv", table="match"))))
    assert match[0][:4] == ["games", "W", "D", "L"] and match[1][:4] == ["6", "3", "2", "1"]
    sprt = list(csv.reader(io.StringIO(render_standings(table, "csv", table="sprt"))))
    assert sprt[0][-1] == "verdict" and sprt[1][-2] == "3"
    # a two-bot table without an SPRT lacks only the SPRT, and says so
    with pytest.raises(ValueError, match="no sprt table in these standings: it needs an SPRT"):
        render_standings(compute_standings(records, ["a", "b"]), "csv", table="sprt")


def test_json_has_no_infinity_when_a_bot_wins_everything():
    records = [game(i, "a", "b", "white") for i in range(4)]  # a wins every game
    for record in records:
        record.pair = record.index // 2
    text = render_standings(compute_standings(records, ["a", "b"]), "json")
    data = json.loads(text)  # strict JSON: no Infinity
    assert data["match"]["elo"] is None and data["match"]["los"] == 1.0
    assert data["elo_regularized"] is True
    assert "virtual draw" in render_standings(compute_standings(records, ["a", "b"]))


@pytest.mark.parametrize(("los", "cell"), [(0.02, "2.0%"), (0.05, "5.0%"), (0.06, "≈ 6.0%"), (0.5, "≈ 50.0%"),
                                           (0.949, "≈ 94.9%"), (0.95, "95.0%"), (1.0, "100.0%")])
def test_the_mark_is_only_where_the_games_separate_the_bots_neither_way(los, cell):
    standing = BotStanding("a", los_next=los)
    table = Standings(game="yoxii", bots=[standing, BotStanding("b")], total_games=1, by_color={},
                      crosstable={"a": {"b": (1.0, 1)}, "b": {"a": (0.0, 1)}})
    row = next(line for line in render_standings(table).splitlines() if line.split()[1:2] == ["a"])
    assert row.rstrip().endswith(cell) or f"  {cell}  " in row, row


def gauntlet_records() -> list[GameRecord]:
    """``me`` against three opponents in game pairs: 3.5/4 against ``weak``,
    1/4 against ``strong``, 2/4 against ``even``; the opponents never meet."""
    results = {"weak": ["me", "me", "me", None], "strong": ["strong", "strong", "me", "strong"],
               "even": ["me", "even", "even", "me"]}
    records = []
    for opponent, winners in results.items():
        for k, winner in enumerate(winners):
            white, red = ("me", opponent) if k % 2 == 0 else (opponent, "me")
            colour = None if winner is None else "white" if winner == white else "red"
            record = game(len(records), white, red, colour)
            record.pair = len(records) // 2
            records.append(record)
    return records


def test_a_gauntlet_shows_its_first_bot_against_each_opponent():
    records = gauntlet_records()
    table = compute_standings(records, ["me", "weak", "strong", "even"], challenger="me")
    rows = {o.name: o.match for o in table.opponents}
    assert set(rows) == {"weak", "strong", "even"}
    for name, match in rows.items():  # the statistics of their games alone
        alone = [r for r in records if name in r.players.values()]
        assert match == match_statistics(*scores_of(alone, "me"))
    assert (rows["weak"].wins, rows["weak"].draws, rows["strong"].losses) == (3, 1, 3)
    # The ranking's LOS over the next bot only between bots that met.
    for bot, below in zip(table.bots, table.bots[1:]):
        met = "me" in (bot.name, below.name)
        assert (bot.los_next is not None) == met, (bot.name, below.name)
    text = render_standings(table)
    assert "Gauntlet: me against each opponent (from me's side; ≈: not separated)" in text
    lines = text.splitlines()
    head = lines.index("Gauntlet: me against each opponent (from me's side; ≈: not separated)")
    body = {line.split()[0]: line.split() for line in lines[head + 3: head + 6]}
    assert body["weak"][1:6] == ["4", "3", "1", "0", "87.5"] and body["even"][1:6] == ["4", "2", "0", "2", "50.0"]
    assert body["even"][8:10] == ["≈", "50.0%"]
    data = json.loads(render_standings(table, "json"))
    assert data["challenger"] == "me" and [o["opponent"] for o in data["opponents"]] == [o.name for o in table.opponents]
    only = list(csv.reader(io.StringIO(render_standings(table, "csv", table="opponents"))))
    assert only[0][:2] == ["opponent", "games"] and len(only) == 4
    assert not compute_standings(records, ["me", "weak", "strong", "even"]).opponents  # not a gauntlet: no table
    with pytest.raises(ValueError, match="no opponents table in these standings: it needs format: gauntlet"):
        render_standings(compute_standings(records), "plain", table="opponents")


# -- views of a large field, numbers to export ----------------------------------------------


def swiss_with_a_forfeit() -> Standings:
    """Five bots, three Swiss rounds, a bye a round (a won pair); the better
    seed wins every game but s5, who forfeits both games of round 2."""
    from pathlib import Path

    from builders import better_seed, forfeit, start, tournament

    config = tournament(Path("."), 5, "format: swiss\nrounds: 3\nbye: win\n")

    def decide(spec):
        return forfeit(spec, "s5", "timeout") if "s5" in spec.players and spec.round == 2 else better_seed(spec)

    run = start(config).play(decide)
    return compute_standings(run.records, run.seeding, Rules(ranking="points"), rounds=run.rounds)


def test_the_rounds_table_has_a_line_per_pairing_with_its_score_forfeits_and_byes():
    text = render_standings(swiss_with_a_forfeit(), "plain", table="rounds")
    lines = [line.split() for line in text.splitlines()[5:]]
    assert lines[:3] == [["1", "s1", "2–0", "s2"], ["1", "s3", "2–0", "s4"], ["1", "s5", "2", "bye", "(2", "points)"]]
    assert ["2", "s5", "0–2", "s2", "s5", "forfeited", "2", "(timeout)"] in lines
    assert len(lines) == 9  # two pairings and a bye in each of three rounds


def test_the_ranking_by_points_says_what_its_score_and_points_are():
    text = render_standings(swiss_with_a_forfeit(), "plain")
    header = next(line.split() for line in text.splitlines() if line.lstrip().startswith("#"))
    assert header[5:7] == ["score", "byes"] and "points" in header
    assert ("  score: the points of the games the bot played, every stage's (a win 1, a draw ½); points: the Swiss's, "
            "byes counted (of the first stage, in a staged tournament)") in text.splitlines()


def test_the_rounds_csv_and_json_carry_the_scores_as_numbers():
    standings = swiss_with_a_forfeit()
    rows = list(csv.DictReader(io.StringIO(render_standings(standings, "csv", table="rounds"))))
    forfeited = next(r for r in rows if r["round"] == "2" and r["bot"] == "s5")
    assert (forfeited["score"], forfeited["opponent_score"], forfeited["bot_forfeits"], forfeited["status"]) == (
        "0.0", "2.0", "2", "played")
    bye = next(r for r in rows if r["round"] == "1" and r["status"] == "bye")
    assert (bye["bot"], bye["score"], bye["opponent"]) == ("s5", "2.0", "")
    stage = json.loads(render_standings(standings, "json"))["rounds"]["stages"][0]
    result = next(r for r in stage["results"] if r["round"] == 2 and "s5" in r["bots"])
    assert result["bots"] == ["s5", "s2"] and result["score"] == [0.0, 2.0]
    assert result["forfeits"] == [{"bot": "s5", "reason": "timeout"}] * 2
    assert stage["byes"][0] == {"round": 1, "bot": "s5", "points": 2.0}


def test_the_ranking_csv_has_a_number_per_forfeit_reason_and_the_places_a_rank_shares():
    draws = [game(0, "ace", "cat", None), game(1, "cat", "ace", None), game(2, "ace", "dog", "white", forfeit="crash")]
    standings = compute_standings(draws, rules=Rules(ranking="points"))
    rows = {r["bot"]: r for r in csv.DictReader(io.StringIO(render_standings(standings, "csv")))}
    assert (rows["ace"]["place_from"], rows["ace"]["place_to"]) == ("1", "1")
    assert [(rows[b]["place_from"], rows[b]["place_to"]) for b in ("cat", "dog")] == [("2", "2"), ("3", "3")]
    assert rows["dog"]["forfeits_crash"] == "1" and rows["dog"]["forfeits_timeout"] == "0"
    tied = compute_standings([game(0, "ace", "cat", None), game(1, "cat", "ace", None)], rules=Rules(ranking="points"))
    shared = list(csv.DictReader(io.StringIO(render_standings(tied, "csv"))))
    assert [(r["#"], r["place_from"], r["place_to"]) for r in shared] == [("1", "1", "2"), ("1", "1", "2")]


def test_the_bracket_csv_has_each_sides_score_as_a_number():
    from pathlib import Path

    from builders import better_seed, start, tournament

    run = start(tournament(Path("."), 4, "format: knockout\n")).play(better_seed)
    standings = compute_standings(run.records, run.seeding, Rules(ranking="points"), rounds=run.rounds)
    rows = list(csv.DictReader(io.StringIO(render_standings(standings, "csv", table="bracket"))))
    final = rows[-1]
    assert (final["round"], final["round_name"], final["bot_1"], final["bot_2"]) == ("2", "final", "s1", "s2")
    assert (final["score_1"], final["score_2"], final["winner"]) == ("2.0", "0.0", "s1")
    places = {r["bot"]: (r["place_from"], r["place_to"]) for r in csv.DictReader(io.StringIO(render_standings(standings, "csv")))}
    assert places["s3"] == places["s4"] == ("3", "4")


def test_the_head_to_head_is_left_out_above_16_bots_with_a_line_saying_how_to_get_it():
    field = [f"b{i:02d}" for i in range(17)]
    games = [game(i, field[i], field[i + 1], "white") for i in range(16)]
    standings = compute_standings(games, bot_names=field)
    for fmt in ("plain", "github", "html"):
        text = render_standings(standings, fmt)
        assert "Head to head (row" not in text
        assert "Head to head: left out for 17 bots (more than 16); --table head-to-head shows it" in text
        assert "Results by colour" in text
    alone = render_standings(standings, "plain", table="head-to-head")
    assert "Head to head (row's score against column)" in alone
    assert "Head to head (row" in render_standings(compute_standings(games[:15], bot_names=field[:16]))


def _placed(index: int, place: dict | None, ms: float, **fields) -> GameRecord:
    played = record(index, **fields)
    played.moves = [MoveRecord("a1", ms), MoveRecord("b2", ms)]
    played.played_on = place
    return played


NODE_A = {"host": "node-a", "node_id": "a" * 56, "actor": 1, "nice": 0}
NODE_B = {"host": "node-b", "node_id": "b" * 56, "actor": 2, "nice": 15}


@pytest.mark.parametrize("fmt", ["plain", "github", "html"])
def test_the_games_by_node_in_every_text_format(fmt):
    games = [_placed(0, NODE_A, 10.0, winner="pink"), _placed(1, {**NODE_A, "actor": 3}, 30.0),
             _placed(2, NODE_B, 100.0), _placed(3, None, 5.0)]
    games[2].reason, games[2].forfeit_by, games[2].winner = "timeout", "pink", "black"
    text = render_standings(compute_standings(games), fmt, "nodes")
    assert "Games by node (3 nodes)" in text
    sep = {"plain": r"\s+", "github": r"\s*\|\s*", "html": r"\s*</td><td[^>]*>\s*"}[fmt]
    for cells in (["node-a", "a" * 12, "2", "0", "2", "20.0", "-"], ["node-b", "b" * 12, "1", "15", "1", "100.0", "timeout 1"],
                  ["(not recorded)", "-", "0", "-", "1", "5.0", "-"]):
        assert re.search(sep.join(map(re.escape, cells)), text), (cells, text)
    assert "Ranking" not in text  # only the table asked for


def test_the_games_by_node_in_csv_and_json():
    games = [_placed(0, NODE_A, 10.0, winner="pink"), _placed(1, NODE_B, 100.0)]
    games[1].reason, games[1].forfeit_by, games[1].winner = "timeout", "pink", "black"
    standings = compute_standings(games)
    rows = list(csv.DictReader(io.StringIO(render_standings(standings, "csv", "nodes"))))
    assert [(r["node"], r["node id"], r["nice"], r["games"], r["ms/move"], r["forfeits_timeout"]) for r in rows] == [
        ("node-a", "a" * 56, "0", "1", "10.0", "0"), ("node-b", "b" * 56, "15", "1", "100.0", "1")]
    nodes = json.loads(render_standings(standings, "json"))["nodes"]
    assert [(n["host"], n["node_id"], n["workers"], n["nice"], n["games"], n["mean_move_ms"], n["forfeits"]) for n in nodes] \
        == [("node-a", "a" * 56, [1], [0], 1, 10.0, {}), ("node-b", "b" * 56, [2], [15], 1, 100.0, {"timeout": 1})]
    assert "Games by node" not in render_standings(standings, "plain")  # shown only when asked for


def test_a_calibrated_clusters_games_by_node_show_each_nodes_speed_and_clock_scale():
    fast, slow = _placed(0, {**NODE_A, "speed": 1.0}, 10.0), _placed(1, {**NODE_B, "speed": 0.8}, 20.0)
    fast.time_scale, slow.time_scale = 1.0, 1.25
    standings = compute_standings([fast, slow])
    text = render_standings(standings, "plain", "nodes")
    for cells in (["node-a", "a" * 12, "1", "0", "1.00", "1.00", "1"], ["node-b", "b" * 12, "1", "15", "0.80", "1.25", "1"]):
        assert re.search(r"\s+".join(map(re.escape, cells)), text), (cells, text)
    rows = list(csv.DictReader(io.StringIO(render_standings(standings, "csv", "nodes"))))
    assert [(r["node"], r["speed"], r["time scale"]) for r in rows] == [("node-a", "1.0", "1.0"), ("node-b", "0.8", "1.25")]
    nodes = json.loads(render_standings(standings, "json"))["nodes"]
    assert [(n["speeds"], n["time_scales"]) for n in nodes] == [([1.0], [1.0]), ([0.8], [1.25])]
    # Uncalibrated, the columns are not there.
    assert "speed" not in render_standings(compute_standings([_placed(0, NODE_A, 10.0)]), "plain", "nodes")
