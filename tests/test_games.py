"""``arena games`` (arena.results.games): a results directory's games, a
line each, filtered by bot, opponent, result and round, in every format,
each id one ``arena show`` takes; ``arena standings --table rounds`` of a
round-robin; and a reference tournament's grade by its own rule."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from arena.formats.schedule import make_schedule
from arena.game.records import GameRecord, GameSpec
from arena.results.games import GameFilter, render_games, select_games
from arena.results.grade import grade_sheet, render_sheet
from arena.results.meta import write_meta
from arena.run.results_dir import read_results, tournament_meta
from builders import arena, assert_one_line_error, forfeit, result, tournament

#: What anyone who can write a results directory may put in a record's text (no control character: the loader refuses those).
EVIL = '=HYPERLINK("http://x")<b>|[a](b)'



def written(directory: Path, bots: list[str], decide: Callable[[GameSpec], GameRecord], **settings: object) -> Path:
    """A results directory of ``bots``' tournament (``settings``), every game decided by ``decide``."""
    directory.mkdir(exist_ok=True)
    config = tournament(directory, bots, output="out", seed=5, **settings)
    out = config.output
    out.mkdir()
    (out / "games.jsonl").write_bytes(b"".join(decide(spec).to_line() for spec in make_schedule(config.competition)))
    write_meta(out, tournament_meta(config))
    return out


def ann_bob_cy(spec: GameSpec) -> GameRecord:
    """ann wins every game, except that bob forfeits its games against cy on a timeout, and cy–ann draws in round 2."""
    players = set(spec.players)
    if players == {"bob", "cy"}:
        return forfeit(spec, "bob", "timeout")
    if players == {"ann", "cy"} and spec.round == 2:
        return result(spec, None)
    return result(spec, "ann" if "ann" in players else min(spec.players))


@pytest.fixture
def round_robin(tmp_path: Path) -> Path:
    return written(tmp_path, ["ann", "bob", "cy"], ann_bob_cy, rounds=2, openings="{plies: 2, count: 2}")


def ids(ran) -> list[str]:
    return [line.split()[0] for line in ran.out.splitlines()[2:]]


def test_the_filters_keep_the_games_asked_for(round_robin):
    everything = arena("games", round_robin)
    assert everything.exit_code == 0, everything.err
    assert len(ids(everything)) == 24  # 3 pairs x 2 openings x 2 colours x 2 rounds
    lost = arena("games", round_robin, "--bot", "cy", "--result", "lost")
    assert ids(lost) and all("ann" in i for i in ids(lost)) and all(" lost " in l for l in lost.out.splitlines()[2:])
    assert len(ids(lost)) == 4  # round 1 against ann; round 2 was drawn
    draws = arena("games", round_robin, "--result", "draw", "--round", "2")
    assert sorted(ids(draws)) == [f"r2-ann~cy-g{k}" for k in range(1, 5)]
    assert ids(arena("games", round_robin, "--result", "draw", "--round", "1")) == []
    assert "No games match." in arena("games", round_robin, "--result", "draw", "--round", "1").out
    forfeits = arena("games", round_robin, "--bot", "cy", "--result", "forfeit")
    assert ids(forfeits) == []  # bob forfeited them, not cy
    by_bob = arena("games", round_robin, "--bot", "bob", "--opponent", "cy", "--result", "forfeit")
    assert len(ids(by_bob)) == 8 and all("timeout by bob" in l for l in by_bob.out.splitlines()[2:])
    won = arena("games", round_robin, "--bot", "cy", "--opponent", "bob", "--result", "WON", "--round", "2")
    assert sorted(ids(won)) == [f"r2-bob~cy-g{k}" for k in range(1, 5)]


def test_each_line_shows_the_game_and_its_id_works_with_arena_show(round_robin):
    listed = arena("games", round_robin, "--bot", "ann", "--opponent", "bob", "--round", "1").out.splitlines()
    assert listed[0].split() == ["id", "round", "players", "result", "reason", "plies", "seconds", "ended"]
    first = listed[2].split()
    assert first[:7] == ["r1-ann~bob-g1", "1", "ann", "vs", "bob", "won", "alignment"]
    shown = arena("show", round_robin, first[0], "--final")
    assert shown.exit_code == 0 and "ann" in shown.out and "bob" in shown.out
    seated = arena("games", round_robin, "--round", "1", "--opponent", "bob", "--bot", "ann").out.splitlines()[3]
    assert seated.split()[:5] == ["r1-ann~bob-g2", "1", "bob", "vs", "ann"]  # players as seated: bob moved first
    unsided = arena("games", round_robin, "--round", "1").out
    assert "r1-ann~bob-g2      1  bob vs ann  0-1" in unsided


def test_every_format_and_what_a_record_holds_made_safe(tmp_path):
    def evil(spec: GameSpec) -> GameRecord:
        return replace(result(spec, "ann"), ended_at=EVIL)

    out = written(tmp_path, ["ann", "bob"], evil, openings="{plies: 2, count: 1}")
    rows = select_games(read_results(out).records, GameFilter())
    assert len(rows) == 2 and rows[0].plies == 0 and rows[0].seconds is None
    for fmt in ("plain", "github", "html", "csv", "json"):
        ran = arena("games", out, "-f", fmt)
        assert ran.exit_code == 0 and ("<b>" not in ran.out or fmt in ("plain", "json", "csv")), fmt
    table = list(csv.DictReader(io.StringIO(arena("games", out, "-f", "csv").out)))
    assert [r["id"] for r in table] == ["r1-ann~bob-g1", "r1-ann~bob-g2"]
    assert table[0]["ended_at"].startswith("'=HYPERLINK") and table[0]["winner"] == "ann"
    assert table[0]["result"] == "1-0" and table[1]["result"] == "0-1" and table[0]["plies"] == "0"
    data = json.loads(arena("games", out, "-f", "json").out)["games"]
    assert data[1]["players"] == ["bob", "ann"] and data[1]["winner"] == "ann" and data[1]["ended_at"] == EVIL
    assert "<td>=HYPERLINK(&quot;http://x&quot;)&lt;b&gt;|[a](b)</td>" in arena("games", out, "-f", "html").out
    github = render_games(rows, "github")
    assert "| r1-ann\\~bob-g1 |" in github and "&lt;b&gt;\\|\\[a](b) |" in github


def test_bad_filters_are_one_line_errors(round_robin, tmp_path):
    assert_one_line_error(arena("games", round_robin, "--result", "won"), "--result won is from a bot's side")
    assert_one_line_error(arena("games", round_robin, "--result", "lose"), "unknown result 'lose'", "won, lost")
    assert_one_line_error(arena("games", round_robin, "--bot", "dee"), "no bot 'dee'", "ann, bob, cy")
    assert_one_line_error(arena("games", round_robin, "-f", "pdf"), "unknown format 'pdf'")
    assert_one_line_error(arena("games", tmp_path / "nowhere"), "no such file or directory")
    assert arena("games", round_robin, "--round", "0").exit_code == 2


def test_standings_shows_a_round_robins_rounds(round_robin, tmp_path):
    shown = arena("standings", round_robin, "--table", "rounds")
    assert shown.exit_code == 0, shown.err
    assert "Rounds (round-robin, 2 of 2 paired)" in shown.out
    lines = [line.split() for line in shown.out.splitlines()]
    assert ["2", "ann", "2–2", "cy"] in lines and ["1", "bob", "0–4", "cy", "bob", "forfeited", "4", "(timeout)"] in lines
    rows = list(csv.reader(io.StringIO(arena("standings", round_robin, "--table", "rounds", "-f", "csv").out)))
    assert len(rows) == 1 + 6 and all(row[-1] == "played" for row in rows[1:])
    gauntlet = written(tmp_path / "g", ["ann", "bob", "cy"], ann_bob_cy, format="gauntlet")
    assert_one_line_error(arena("standings", gauntlet, "--table", "rounds"),
                          "no rounds table", "it needs a Swiss or a round-robin")


def staff_and_teams(spec: GameSpec) -> GameRecord:
    """The course: staff-greedy beats every team; staff-random loses to
    every team but team-cy, which draws its first game pair against it and
    loses the rest: 1 of 16."""
    players = set(spec.players)
    if "staff-greedy" in players:
        return result(spec, "staff-greedy")
    if "team-cy" in players:
        return result(spec, None) if spec.game_id.endswith(("-g1", "-g2")) else result(spec, "staff-random")
    return result(spec, next(p for p in spec.players if p.startswith("team")))


def test_a_reference_tournaments_grade_is_the_score_against_the_staff(tmp_path):
    bots = ["staff-random", "staff-greedy", "team-ann", "team-bob", "team-cy", "team-dee"]

    def decide(spec: GameSpec) -> GameRecord:
        if "team-dee" in spec.players:  # 0/16: loses every game, forfeits one
            return forfeit(spec, "team-dee", "crash") if spec.game_id.endswith("-g1") else \
                result(spec, next(p for p in spec.players if p != "team-dee"))
        return staff_and_teams(spec)

    out = written(tmp_path, bots, decide, format="reference", reference="[staff-random, staff-greedy]",
                  openings="{plies: 2, count: 4}")
    results = read_results(out)
    standings = results.standings()
    cy = grade_sheet(results, standings, "team-cy")
    assert (cy.score, cy.games) == (1.0, 16)
    assert (cy.place, cy.of) == ("3", 4)  # above team-dee (0/16), below the teams at 8/16
    assert [b.name for b in standings.entrants][2:] == ["team-cy", "team-dee"]
    assert cy.rule.startswith("the score against the reference bots (staff-random, staff-greedy): a win 1, a draw ½")
    sheet = render_sheet(cy, "md")
    assert "- Place: 3 of 4\n- Ranked by: the score against the reference bots" in sheet
    staff = grade_sheet(results, standings, "staff-greedy")
    assert staff.of == 6 and staff.rule.startswith("TrueSkill's cautious estimate of each bot's skill")
    md = arena("report", out, "--bot", "team-cy", "-f", "md")
    assert md.exit_code == 0 and "- Place: 3 of 4" in md.out
    table = arena("standings", out).out
    first = table.split("\n\n")[1]
    assert first.startswith("Against the reference bots (entrants ranked by score %)")
    assert first.index("team-cy") < first.index("team-dee")
    assert "ranked by the score against the reference bots" in table
    csv_rows = arena("standings", out, "-f", "csv").out.splitlines()  # a gradebook's: the same first table
    assert csv_rows[0].startswith("#,bot,staff-random,staff-greedy")
    assert [row.split(",")[1] for row in csv_rows[1:]][2:] == ["team-cy", "team-dee"]


def test_a_points_tournaments_sheet_says_its_rule_in_words(tmp_path):
    out = written(tmp_path, ["ann", "bob", "cy"], ann_bob_cy, ranking="points")
    results = read_results(out)
    sheet = grade_sheet(results, results.standings(), "cy")
    assert (sheet.place, sheet.of) == ("2", 3)
    assert sheet.rule.startswith("points (a win 1, a draw ½, a loss or a forfeit 0); equal points are split by")
