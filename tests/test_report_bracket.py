"""The report's drawing of the rounds: a knockout's bracket, a Swiss's
rounds, each game linked to the viewer; bot names shown as text."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import parse_qs

import pytest

from arena.game.records import GameRecord
from builders import HOSTILE_NAME, KNOCKOUT, STAND_IN, played_cup, results, report_page
from arena.results.report.bracket import game_href, rounds_html
from arena.formats.rounds import Rounds
from arena.results.standings import compute_standings
from arena.results.tables import standings_tables


def rounds_of(records: list[GameRecord], meta: dict[str, Any]) -> Rounds:
    rounds = results(records, meta).rounds
    assert rounds is not None
    return rounds


def drawing(rounds: Rounds) -> ET.Element:
    """The drawing as a tree (it is well-formed: every tag closed, every attribute quoted)."""
    return ET.fromstring(rounds_html(rounds))


def has_class(element: ET.Element, name: str) -> bool:
    return name in (element.get("class") or "").split()


def find(element: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in element.iter() if has_class(e, cls)]


def text(element: ET.Element) -> str:
    return "".join(element.itertext())


def linked_games(element: ET.Element) -> list[str]:
    """The game ids ``element``'s links open, read as the viewer reads the address (URLSearchParams)."""
    out = []
    for a in find(element, "game"):
        href = a.get("href")
        assert href.startswith("#") and href.endswith("&ply=0"), href
        out.append(parse_qs(href[1:])["game"][0])
    return out


@pytest.fixture(scope="module")
def knockout() -> tuple[list[GameRecord], dict[str, Any]]:
    return played_cup(*KNOCKOUT)


def test_a_knockout_is_drawn_a_column_per_round(knockout):
    records, meta = knockout
    tree = drawing(rounds_of(records, meta))
    (bracket,) = find(tree, "bracket")
    columns = find(bracket, "ko-round")
    assert [c.get("data-name") for c in columns] == ["quarter-finals", "semi-finals", "final", None]
    assert [text(c.find("h4")) for c in columns] == ["Quarter-finals round 1", "Semi-finals round 2", "Final round 3", "Winner"]
    # Each round's matches in bracket order: both bots with their seeds, the winner marked.
    boxes = [[[(text(b.find("span[@class='seed']")), text(b.find("span[@class='name']")), has_class(b, "winner"))
               for b in find(m, "bot")] for m in find(c, "match")] for c in columns]
    assert boxes == [
        [[("1", "ann", True)], [("4", "dan", False), ("5", "eve", True)], [("2", "bob", True)], [("3", HOSTILE_NAME, True)]],
        [[("1", "ann", True), ("5", "eve", False)], [("2", "bob", True), ("3", HOSTILE_NAME, False)]],
        [[("1", "ann", False), ("2", "bob", True)]],
        [[("2", "bob", True)]],
    ]
    how = [(m.get("data-decided"), text(m.find("div[@class='how']"))) for c in columns[:3] for m in find(c, "match")]
    assert how == [
        ("bye", "bye: goes through without playing"),
        ("tie-break", "won in the tie-breaks: 1 extra game pair"),
        ("bye", "bye: goes through without playing"),
        ("bye", "bye: goes through without playing"),
        ("score", "won on score"),
        ("seed", "tied after 3 game pairs: the better seed goes through"),
        ("score", "won on score"),
    ]
    scores = [[text(s) for s in find(m, "score")] for m in find(columns[1], "match")]
    assert scores == [["2", "0"], ["3", "3"]]


def test_each_match_links_its_games_for_the_viewer(knockout):
    records, meta = knockout
    rounds = rounds_of(records, meta)
    tree = drawing(rounds)
    matches = [m for row in rounds.stages[0].matches for m in row]
    boxes = find(tree, "match")[: len(matches)]
    for match, box in zip(matches, boxes):
        assert linked_games(box) == match.games
    ids = {r.game_id for r in records}
    assert sorted(g for box in boxes for g in linked_games(box)) == sorted(ids)  # every game, once
    # The tie-break games follow their mark: the hostile bot's match had two of them.
    seed_box = boxes[5]
    labels = [e.text for e in seed_box.iter() if has_class(e, "game") or has_class(e, "tb")]
    assert labels == ["1", "2", "tie-break", "3", "4", "5", "6"]
    # The address is the one the viewer writes for that game (encodeURIComponent).
    hostile_game = f"r2-{HOSTILE_NAME}~bob-g1"
    assert game_href(hostile_game) == "#game=r2-%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E~bob-g1&ply=0"
    assert hostile_game in linked_games(seed_box)


def test_the_report_draws_the_bracket_instead_of_its_text_table(knockout):
    records, meta = knockout
    page = report_page(records, meta)
    assert rounds_html(rounds_of(records, meta)) in page
    assert 'data-table="bracket"' not in page
    assert 'data-table="ranking"' in page and 'data-table="crosstable"' in page
    # `arena standings` keeps its text table.
    standings = compute_standings(records, [b["name"] for b in meta["bots"]], rounds=rounds_of(records, meta))
    assert "bracket" in [t.key for t in standings_tables(standings)]
    # The hostile name is text wherever it appears: escaped, never markup.
    assert HOSTILE_NAME not in page
    assert html.escape(HOSTILE_NAME) in page
    assert not re.search(r"<img[^>]*onerror", page)


def test_a_knockout_being_played_shows_the_rounds_to_come(knockout):
    records, meta = knockout
    first = {**meta, "pairings": meta["pairings"][:1]}
    played = [r for r in records if r.round == 1][:2]  # dan and eve tied after their first pair
    tree = drawing(rounds_of(played, first))
    columns = find(tree, "ko-round")
    assert [c.get("data-name") for c in columns] == ["quarter-finals", "semi-finals", "final"]  # no winner yet
    assert [len(find(c, "pending")) for c in columns] == [0, 2, 1]
    (open_,) = find(columns[0], "open")
    assert text(open_.find("div[@class='how']")) == "being played"
    assert linked_games(open_) == [r.game_id for r in played]
    # Before any game ends, the report already shows who meets whom.
    assert "quarter-finals" in report_page([], first)


#: A Swiss of 5 (a bye each round), then a knockout of its top 4.
STAGED = ("stages: [{format: swiss, rounds: 3}, {format: knockout, top: 4}]", ["ann", "bob", "cy", STAND_IN, "eve"], {})


def test_a_staged_tournament_draws_its_swiss_rounds_then_its_bracket():
    records, meta = played_cup(*STAGED)
    rounds = rounds_of(records, meta)
    swiss, knockout_ = rounds.stages
    page = report_page(records, meta)
    assert 'data-table="rounds"' not in page and 'data-table="bracket"' not in page
    assert "Rounds (stage 1, Swiss, 3 of 3 paired)" in page
    assert "Bracket (stage 2, knockout of the top 4 of stage 1)" in page
    tree = drawing(rounds)
    cards = find(tree, "swiss-round")
    assert [c.get("data-round") for c in cards] == ["1", "2", "3"]
    for card, pairing in zip(cards, swiss.pairings):
        rows = find(card, "pairing")
        assert [(text(r[0]), text(r[2])) for r in rows] == list(pairing.pairs)
        for row, (a, b) in zip(rows, pairing.pairs):
            assert linked_games(row) == swiss.results[(pairing.round, a, b)].games
            score = swiss.results[(pairing.round, a, b)].score
            assert text(row[1]) == f"{score[0]:g}–{score[1]:g}"
            ahead = a if score[0] > score[1] else b
            assert [text(td) for td in row if has_class(td, "ahead")] == [ahead]
        byes = find(card, "bye")
        assert [(text(r[0]), text(r[1])) for r in byes] == [(bot, "bye: scores a win") for bot in pairing.byes]
    assert sum(len(p.byes) for p in swiss.pairings) == 3
    # The knockout's seeds are the Swiss's order.
    columns = find(tree, "ko-round")
    assert [c.get("data-name") for c in columns] == ["semi-finals", "final", None]
    first = [[text(b.find("span[@class='seed']")) + " " + text(b.find("span[@class='name']")) for b in find(m, "bot")]
             for m in find(columns[0], "match")]
    order = knockout_.field
    assert first == [[f"1 {order[0]}", f"4 {order[3]}"], [f"2 {order[1]}", f"3 {order[2]}"]]
    linked = [g for m in find(tree, "match") for g in linked_games(m)]
    assert sorted(linked) == sorted(r.game_id for r in records if r.round > 3)


def test_a_match_with_a_bot_that_left_is_a_walkover(knockout):
    records, meta = knockout
    # Two rounds paired, the first played; then ann leaves the tournament.
    left = {**meta, "pairings": meta["pairings"][:2], "bots": [b for b in meta["bots"] if b["name"] != "ann"]}
    tree = drawing(rounds_of([r for r in records if r.round == 1], left))
    semi = find(find(tree, "ko-round")[1], "match")[0]
    assert semi.get("data-decided") == "walkover"
    assert text(semi.find("div[@class='how']")) == "walkover: the other bot left"
    assert [text(b.find("span[@class='name']")) for b in find(semi, "winner")] == ["eve"]
    assert linked_games(semi) == []
