"""``ranking: trueskill | elo | points``: the order of the standings, the
tie-breaks of ``points`` (head-to-head among the tied, Sonneborn–Berger,
wins), shared ranks, and the plain numbers of csv and json, through
:func:`compute_standings` and through ``arena standings``."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from arena.formats.competition import Rules
from arena.results.standings import compute_standings
from arena.results.tables import render_standings
from builders import BOTS, arena, record, records, result, seed, start, tournament, tournament_file, winner_by

# One round robin of eight bots, a single game per pair, found so that its
# score groups of two hold one tie of each kind: (row, column) -> row's points.
RESULTS = {
    ("a", "b"): 0.5, ("a", "c"): 0.5, ("a", "d"): 0, ("a", "e"): 0.5, ("a", "f"): 0.5, ("a", "g"): 0.5,
    ("a", "h"): 0, ("b", "c"): 1, ("b", "d"): 0.5, ("b", "e"): 0, ("b", "f"): 0, ("b", "g"): 1, ("b", "h"): 1,
    ("c", "d"): 1, ("c", "e"): 0, ("c", "f"): 1, ("c", "g"): 0.5, ("c", "h"): 0, ("d", "e"): 0.5, ("d", "f"): 1,
    ("d", "g"): 0.5, ("d", "h"): 0.5, ("e", "f"): 0.5, ("e", "g"): 0.5, ("e", "h"): 0.5, ("f", "g"): 0.5,
    ("f", "h"): 0.5, ("g", "h"): 0,
}
NAMES = sorted({name for pair in RESULTS for name in pair})


#: The colour that wins a game its first bot scores ``points`` in.
WINNER = {1: "pink", 0.5: None, 0: "black"}
RECORDS = [record(i, a, b, WINNER[points], game_id=f"r1-{a}~{b}-g1")
           for i, ((a, b), points) in enumerate(RESULTS.items())]


def points_of(a: str, b: str) -> float:
    return RESULTS[a, b] if (a, b) in RESULTS else 1 - RESULTS[b, a]


def expected_tables() -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """Score, Sonneborn–Berger and wins of each bot, from the table above."""
    score = {n: sum(points_of(n, o) for o in NAMES if o != n) for n in NAMES}
    sb = {n: sum(points_of(n, o) * score[o] for o in NAMES if o != n) for n in NAMES}
    wins = {n: sum(points_of(n, o) == 1 for o in NAMES if o != n) for n in NAMES}
    return score, sb, wins


def test_the_data_holds_one_tie_of_each_kind():
    # The test's own premise: each score shared by two bots is settled by a
    # different tie-break, and one by none.
    score, sb, wins = expected_tables()
    kinds = {}
    groups: dict[float, list[str]] = {}
    for name in NAMES:
        groups.setdefault(score[name], []).append(name)
    for group in groups.values():
        assert len(group) <= 2
        if len(group) == 2:
            a, b = group
            kind = ("head-to-head" if points_of(a, b) != 0.5 else "sb" if sb[a] != sb[b]
                    else "wins" if wins[a] != wins[b] else "none")
            kinds[kind] = (a, b)
    assert set(kinds) == {"head-to-head", "sb", "wins", "none"}


#: The order ``ranking: points`` gives, and why: e and h score 4.5 and drew
#: each other, e has the better Sonneborn–Berger; b and d score 4, drew, have
#: the same SB, b won more games; c and f score 3, c beat f; a and g score 2.5,
#: drew, have the same SB and no win: they share 7th place.
ORDER = ["e", "h", "b", "d", "c", "f", "a", "g"]
RANKS = [1, 2, 3, 4, 5, 6, 7, 7]


def test_points_breaks_each_tie_in_the_documented_order():
    standings = compute_standings(RECORDS, NAMES, Rules(ranking="points"))
    score, sb, wins = expected_tables()
    assert standings.ranking == "points"
    assert [b.name for b in standings.bots] == ORDER
    assert [b.rank for b in standings.bots] == RANKS
    assert [b.shared_rank for b in standings.bots] == [False] * 6 + [True, True]
    for bot in standings.bots:
        assert bot.score == score[bot.name] and bot.wins == wins[bot.name]
        assert bot.sonneborn_berger == pytest.approx(sb[bot.name])
    # each documented tie-break decides one pair, and the order of the checks matters:
    assert points_of("c", "f") == 1 and sb["f"] > sb["c"]  # head-to-head first, even against a better SB
    assert points_of("e", "h") == 0.5 and sb["e"] > sb["h"] and wins["h"] > wins["e"]  # SB before wins
    assert points_of("b", "d") == 0.5 and sb["b"] == sb["d"] and wins["b"] > wins["d"]
    assert points_of("a", "g") == 0.5 and sb["a"] == sb["g"] and wins["a"] == wins["g"]


def test_the_text_formats_show_the_rule_and_the_shared_rank():
    standings = compute_standings(RECORDS, NAMES, Rules(ranking="points"))
    text = render_standings(standings)
    assert "Ranking by points" in text and "ranked by points (win 1, draw ½)" in text
    rows = [line.split() for line in text.splitlines() if line[:4].strip() in ("7=", "6")]
    assert [row[:2] for row in rows] == [["6", "f"], ["7=", "a"], ["7=", "g"]]
    assert "<h2>Ranking by points</h2>" in render_standings(standings, "html")


def test_trueskill_stays_the_default_and_elo_orders_by_elo():
    default = compute_standings(RECORDS, NAMES)
    assert default.ranking == "trueskill"
    ratings = [b.rating for b in default.bots]
    assert ratings == sorted(ratings, reverse=True) and [b.rank for b in default.bots] == list(range(1, 9))
    by_elo = compute_standings(RECORDS, NAMES, Rules(ranking="elo"))
    elos = [b.elo for b in by_elo.bots]
    assert elos == sorted(elos, reverse=True) and "Ranking by Elo" in render_standings(by_elo)
    with pytest.raises(ValueError, match="unknown ranking 'best'"):
        compute_standings(RECORDS, NAMES, Rules(ranking="best"))


def check_csv_against_json(csv_text: str, json_text: str) -> list[dict[str, str]]:
    """Every number of the csv ranking, read back with the csv module, is the json's."""
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    bots = json.loads(json_text)["bots"]
    assert [row["bot"] for row in rows] == [bot["name"] for bot in bots]
    columns = {"#": "rank", "rating": "rating", "mu": "mu", "sigma": "sigma", "games": "games", "W": "wins",
               "D": "draws", "L": "losses", "score %": "score_pct", "Elo": "elo", "±": "elo_margin",
               "LOS": "los_next", "ms/move": "mean_move_ms"}
    for row, bot in zip(rows, bots):
        for column, key in columns.items():
            if bot[key] is None:
                assert row[column] == "", (column, row)
            else:
                assert float(row[column]) == pytest.approx(bot[key], rel=1e-12, abs=1e-12), (column, row)
        assert row["shared"] == ("true" if bot["shared_rank"] else "false")
        assert 0 <= float(row["LOS"] or 0) <= 1  # a fraction, not a percentage
    return rows


def test_csv_holds_plain_numbers_that_match_the_json():
    standings = compute_standings(RECORDS, NAMES, Rules(ranking="points"))
    rows = check_csv_against_json(render_standings(standings, "csv"), render_standings(standings, "json"))
    assert {row["ranked by"] for row in rows} == {"points"}
    assert rows[-1]["LOS"] == ""  # the last bot has no LOS: empty, not "-"
    assert rows[0]["Elo"] == repr(standings.bots[0].elo)  # every digit, no sign or rounding
    h2h = list(csv.reader(io.StringIO(render_standings(standings, "csv", table="crosstable"))))
    assert h2h[1][0] == "e" and h2h[1][1] == "" and float(h2h[1][2]) == 0.5  # diagonal empty, score a number


def test_places_are_the_rank_only_under_points(tmp_path: Path) -> None:
    run = start(tournament(tmp_path, 8, "format: knockout\nranking: trueskill\n"))
    run.play(winner_by(lambda spec: None if spec.round == 1 else min(spec.players, key=seed)))
    standings = compute_standings(run.records, [b.name for b in run.config.bots], Rules(ranking="trueskill"), rounds=run.rounds)
    table = render_standings(standings, "plain", "ranking")
    assert "5–8" not in table and "3–4" not in table


def write_results(directory: Path, ranking: str) -> Path:
    """A results directory of a round robin of the eight bots (each pair plays
    its 4 games, every one ending as :data:`RESULTS` says for that pair), with
    ``ranking`` in its tournament.json as ``arena run`` writes it."""
    from arena.run.results_dir import tournament_meta
    from arena.formats.schedule import make_schedule

    config = tournament(directory, NAMES, name="ranked", ranking=ranking)
    lines = []
    for spec in make_schedule(config.competition):
        first, second = spec.players
        points = points_of(first, second)
        lines.append(result(spec, None if points == 0.5 else first if points == 1 else second).to_line())
    out = directory / "results"
    out.mkdir()
    (out / "games.jsonl").write_bytes(b"".join(lines))
    (out / "tournament.json").write_text(json.dumps(tournament_meta(config).to_json()))
    return out


def test_arena_standings_shows_the_rule_and_shared_ranks(tmp_path):
    out = write_results(tmp_path, "points")
    data = json.loads(arena("standings", out, "-f", "json").out)
    assert data["ranking"] == "points" and data["total_games"] == 4 * 28
    assert [b["name"] for b in data["bots"]] == ORDER
    assert [(b["rank"], b["shared_rank"]) for b in data["bots"]][-3:] == [(6, False), (7, True), (7, True)]
    score, sb, _ = expected_tables()
    assert {b["name"]: b["sonneborn_berger"] for b in data["bots"]} == pytest.approx({n: 16 * sb[n] for n in NAMES})
    csv_text = arena("standings", out, "-f", "csv").out
    rows = check_csv_against_json(csv_text, arena("standings", out, "-f", "json").out)
    assert [(row["#"], row["shared"], row["ranked by"]) for row in rows][-2:] == [("7", "true", "points")] * 2
    plain = arena("standings", out).out
    assert "Ranking by points" in plain and re.search(r"^\s*7=\s+a\s", plain, re.M) and re.search(r"^\s*7=\s+g\s", plain, re.M)
    # every command agrees from the directory: the report says the rule too
    assert arena("report", out).exit_code == 0
    assert "Ranking by points" in (out / "report.html").read_text()


# -- withdraw_after_crashes ------------------------------------------------------


def test_a_bot_that_keeps_crashing_is_withdrawn(tmp_path):
    # gamma plays, then exits mid-game, in every game: 8 of the 12 games are its.
    path = tournament_file(tmp_path, cmds={"gamma": f"python {BOTS / 'crash_midgame.py'}"},
                           extra="withdraw_after_crashes: 2\n")
    result = arena("run", path, "-f", "json")
    assert result.exit_code == 0, result.err
    games = records(tmp_path / "out")
    assert len(games) == 12
    mine = [g for g in games if "gamma" in g["players"].values()]
    crashed = [g for g in mine if g["reason"] == "crash"]
    withdrawn = [g for g in mine if g["reason"] == "withdrawn"]
    # two crashes in a row withdraw it; the concurrency of 2 lets one more game be in flight then
    assert 2 <= len(crashed) <= 3 and len(crashed) + len(withdrawn) == 8, [g["reason"] for g in mine]
    for game in withdrawn:
        assert game["players"][game["forfeit_by"]] == "gamma" and game["moves"] == []
        assert "withdraw_after_crashes: 2" in game["detail"]
    # the games without gamma were all played
    assert all(g["reason"] not in ("crash", "withdrawn") for g in games if g not in mine)
    data = json.loads(result.out[: result.out.rindex("}") + 1])
    gamma = next(b for b in data["bots"] if b["name"] == "gamma")
    assert gamma["withdrawn"] is True and gamma["forfeits"] == {"crash": len(crashed), "withdrawn": len(withdrawn)}
    assert not any(b["withdrawn"] for b in data["bots"] if b["name"] != "gamma")
    plain = arena("standings", tmp_path / "out").out
    assert f"crash {len(crashed)}, withdrawn {len(withdrawn)}" in plain
    assert "withdrawn (crashed too many games in a row; later games forfeited): gamma" in plain
    # its games were never played: a resumed run plays them again, unless told not to
    kept = arena("run", path, "--replay-forfeits", "none")
    assert kept.exit_code == 0 and "0 games played, 12 resumed" in kept.err
    again = arena("run", path)
    assert again.exit_code == 0 and f"{len(withdrawn)} games played" in again.err, again.err
    replayed = [g for g in records(tmp_path / "out") if "gamma" in g["players"].values()]
    assert len(replayed) == 8 and {g["reason"] for g in replayed} <= {"crash", "withdrawn"}


def test_withdraw_after_crashes_is_off_by_default_and_checked():
    from arena.run.config import ConfigError, parse_config

    base = "game: oxono\ntime_control: 5+0.1\nbots:\n  - {name: a, cmd: python -m bots.random_bot}\n" \
           "  - {name: b, cmd: python -m bots.random_bot}\n"
    assert parse_config("name: t\n" + base).competition.rules.withdraw_after_crashes is None
    assert parse_config("name: t\nwithdraw_after_crashes: 3\n" + base).competition.rules.withdraw_after_crashes == 3
    with pytest.raises(ConfigError, match="withdraw_after_crashes.*positive integer"):
        parse_config("name: t\nwithdraw_after_crashes: 0\n" + base)
    with pytest.raises(ConfigError, match="ranking.*trueskill, elo, points"):
        parse_config("name: t\nranking: best\n" + base)
