"""A team's grade sheet (arena.results.grade): its place, points, byes,
forfeits and rounds as the standings count them; the report's bot page
shows it, ``arena report --bot NAME -f text|md`` writes it to mail."""

from __future__ import annotations

import json
import pytest

from arena.results.grade import grade_sheet, grade_sheets, render_sheet
from arena.results.meta import write_meta
from arena.run.results_dir import tournament_meta
from builders import arena, assert_one_line_error, swiss_in_round_3


def test_a_sheet_has_the_place_points_byes_forfeits_and_every_round():
    results, _ = swiss_in_round_3()
    standings = results.standings()
    sheets = grade_sheets(results, standings, [b.name for b in standings.bots])
    for bot in standings.bots:  # the numbers are the ranking's
        sheet = sheets[bot.name]
        assert (sheet.place, sheet.points, sheet.score, sheet.games) == (bot.rank_text, bot.points, bot.score, bot.games)
        assert sheet.of == 5
    s5, s2 = sheets["s5"], sheets["s2"]
    assert (s5.byes, s5.bye_points, s5.forfeits, s5.forfeit_wins) == (1, 2.0, {"timeout": 2}, {})
    assert s2.forfeit_wins == {"timeout": 2} and s2.forfeits == {}
    lines = [(l.round, l.opponent, l.score, l.status, l.note) for l in s5.rounds]
    assert lines[:2] == [(1, None, (2.0, None), "bye", "bye (2 points)"),
                         (2, "s2", (0.0, 2.0), "played", "s5 forfeited 2 (timeout)")]
    assert [g.forfeit_by for g in s5.rounds[1].games] == ["s5", "s5"]
    assert {g.color for g in s5.rounds[1].games} == {"pink", "black"}
    # Round 3: one pairing played, the other not yet (and one bot on a bye).
    third = {name: sheet.rounds[-1] for name, sheet in sheets.items()}
    assert sorted(l.status for l in third.values()) == ["bye", "not played", "not played", "played", "played"]
    assert sum(sheet.unplayed for sheet in sheets.values()) == 2
    opponents = {o.name: (o.games, o.wins, o.losses, o.forfeits) for o in s5.opponents}
    assert opponents["s2"] == (2, 0, 2, 2)


def test_the_sheet_as_text_and_markdown_to_mail():
    results, _ = swiss_in_round_3()
    sheet = grade_sheet(results, results.standings(), "s5")
    text = render_sheet(sheet, "text", title="cup")
    lines = text.splitlines()
    assert lines[0] == "Grade sheet of s5: cup"
    assert f"Place: {sheet.place} of 5" in lines
    assert lines[4:7] == ["Points: 2 (the Swiss's, byes counted)", "Games: 4 (0 won, 0 drawn, 4 lost), score 0",
                          "Byes: 1 (2 points)"]
    assert "Forfeits lost: timeout 2; won by forfeit: none; pairings not played yet: 0" in lines
    assert ["2", "s2", "black", "0,", "pink", "0", "0–2", "played", "s5", "forfeited", "2", "(timeout)"] in [
        line.split() for line in lines]
    md = render_sheet(sheet, "md")
    assert md.startswith("# Grade sheet of s5\n") and "| round " in md and "- Place: " in md
    s4 = render_sheet(grade_sheet(results, results.standings(), "s4"), "text").splitlines()
    assert s4[-1].split() == ["3", "s2", "-", "-", "not", "played"]
    with pytest.raises(ValueError, match="text, md"):
        render_sheet(sheet, "pdf")
    with pytest.raises(ValueError, match="not in the ranking"):
        grade_sheet(results, results.standings(), "nobody")


def test_the_report_page_carries_the_sheets_it_shows():
    from arena.results.report import build_report
    from test_report import embedded

    results, _ = swiss_in_round_3()
    standings = results.standings()
    data = embedded(build_report(results))
    assert data["sheets"]["s5"] == json.loads(json.dumps(grade_sheet(results, standings, "s5").to_json()))
    assert set(embedded(build_report(results, bot="s2"))["sheets"]) == {"s2"}  # a team's page: its own sheet only


def test_arena_report_writes_a_bots_sheet_to_stdout_or_a_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    results, run = swiss_in_round_3(tmp_path)
    (out / "games.jsonl").write_bytes(b"".join(r.to_line() for r in run.records))
    write_meta(out, tournament_meta(run.config, seeding=run.seeding, pairings=run.pairings))
    shown = arena("report", out, "--bot", "s5", "-f", "text")
    assert shown.exit_code == 0, shown.err
    assert shown.out == render_sheet(grade_sheet(results, results.standings(), "s5"), "text", title="t") + "\n"
    written = arena("report", out, "--bot", "s5", "-f", "md", "-o", tmp_path / "s5.md")
    assert written.exit_code == 0 and written.out == ""
    assert (tmp_path / "s5.md").read_text().startswith("# Grade sheet of s5: t\n")
    assert arena("report", out, "--bot", "s5", "-f", "md", "-o", tmp_path / "s5.md").exit_code == 0  # replaced
    assert_one_line_error(arena("report", out, "-f", "md"), "-f md writes a bot's grade sheet: name the bot with --bot")
    assert_one_line_error(arena("report", out, "--bot", "s5", "-f", "pdf"), "unknown report format 'pdf'")
    assert_one_line_error(arena("report", out, "--bot", "s5", "-f", "md", "-o", out / "games.jsonl"), "part of the results")
