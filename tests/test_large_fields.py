"""Swiss, knockout and staged tournaments through the ``arena`` command.

A round is paired from the results of the rounds before it and stored in
``tournament.json``: a run killed with ``kill -9`` and resumed pairs every
round as an uninterrupted run does, a staged tournament resumes between and
within its stages, and every command reads the same from the directory, its
``games.jsonl`` and the tournament file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.results.store import ResultsStore
from builders import RANDOM_SCRIPT, ROOT, arena, assert_one_line_error, league_file, played, readings, records

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

#: The random bot, a little slower: each line it reads waits a moment, so a
#: run lasts long enough to be killed in the middle of a round.
SLOW_RANDOM = f"""\
import runpy, sys, time
class _Slow:
    def __init__(self, stream):
        self.stream = stream
    def __iter__(self):
        for line in self.stream:
            time.sleep(0.01)
            yield line
sys.stdin = _Slow(sys.stdin)
runpy.run_path({str(RANDOM_SCRIPT)!r}, run_name="__main__")
"""


def field(directory: Path, names: list[str], body: str, *, slow: bool = False, name: str = "field.yaml") -> Path:
    """A tournament of random bots called ``names`` in ``directory``, its settings ``body``."""
    return league_file(directory, names, body, file=name, script=SLOW_RANDOM if slow else None, name="field",
                       concurrency=None, seed=5)


def meta(directory: Path) -> dict:
    return json.loads((directory / "tournament.json").read_text())


def outcomes(directory: Path) -> dict[str, tuple]:
    """Each game's id with who played which seat and who won: what a rerun must repeat."""
    return {r["game_id"]: (tuple(r["players"].values()), r["winner"], r["reason"]) for r in records(directory)}


BOTS7 = [f"bot{i}" for i in range(1, 8)]


def killed_after(path: Path, games: Path, count: int) -> None:
    """``arena run path``, killed with SIGKILL (the whole process group) once ``games`` holds ``count`` lines."""
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if games.exists() and len(games.read_bytes().splitlines()) >= count:
            break
        time.sleep(0.01)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()


def test_a_swiss_killed_mid_round_and_resumed_pairs_every_round_as_an_uninterrupted_one(tmp_path):
    body = "format: swiss\nrounds: 4\nconcurrency: 2\n"
    whole = field(tmp_path / "whole", BOTS7, body)
    result = arena("run", whole)
    assert result.exit_code == 0, result.err
    assert played(result) == 4 * 3 * 2  # 7 bots: 3 pairings and a bye a round, a game pair each
    reference = meta(tmp_path / "whole" / "out")
    assert [p["round"] for p in reference["pairings"]] == [1, 2, 3, 4]
    met = [frozenset(pair) for p in reference["pairings"] for pair in p["pairs"]]
    assert len(met) == len(set(met)) == 12  # no rematch
    byes = [bye for p in reference["pairings"] for bye in p["byes"]]
    assert len(byes) == len(set(byes)) == 4

    path = field(tmp_path / "killed", BOTS7, body, slow=True)
    killed_after(path, tmp_path / "killed" / "out" / "games.jsonl", 8)  # into round 2: paired, partly played
    middle = ResultsStore(tmp_path / "killed" / "out").load().records
    assert 8 <= len(middle) < 24
    assert len(meta(tmp_path / "killed" / "out")["pairings"]) < 4  # killed before the last round was paired
    finish = arena("run", path)
    assert finish.exit_code == 0, finish.err
    assert f"resuming: {len(middle)} of" in finish.err
    assert meta(tmp_path / "killed" / "out")["pairings"] == reference["pairings"]
    assert outcomes(tmp_path / "killed" / "out") == outcomes(tmp_path / "whole" / "out")
    again = arena("run", path)
    assert played(again) == 0


def test_an_adaptive_stage_killed_mid_round_and_resumed_pairs_every_round_as_an_uninterrupted_one(tmp_path):
    body = "format: adaptive\nmax_games: 36\nsettle: {confidence: 0.95, within_elo: 20}\nconcurrency: 2\n"
    whole = field(tmp_path / "whole", BOTS7, body)
    result = arena("run", whole)
    assert result.exit_code == 0, result.err
    assert played(result) == 36  # random bots never settle: it plays its budget, not a game more
    reference = meta(tmp_path / "whole" / "out")
    assert sum(2 * len(p["pairs"]) for p in reference["pairings"]) == 36

    path = field(tmp_path / "killed", BOTS7, body, slow=True)
    killed_after(path, tmp_path / "killed" / "out" / "games.jsonl", 8)  # into round 2: paired from round 1's results
    middle = ResultsStore(tmp_path / "killed" / "out").load().records
    assert 8 <= len(middle) < 36
    assert len(meta(tmp_path / "killed" / "out")["pairings"]) < len(reference["pairings"])
    finish = arena("run", path)
    assert finish.exit_code == 0, finish.err
    assert f"resuming: {len(middle)} of" in finish.err
    assert meta(tmp_path / "killed" / "out")["pairings"] == reference["pairings"]
    assert outcomes(tmp_path / "killed" / "out") == outcomes(tmp_path / "whole" / "out")
    # The same standings from the directory, its games.jsonl and the file.
    out = tmp_path / "killed" / "out"
    game_id = records(out)[-1]["game_id"]
    from_dir, from_games, from_file = (readings(target, game_id) for target in (out, out / "games.jsonl", path))
    assert from_dir == from_games == from_file
    standings = json.loads(from_dir[0])
    stage = standings["rounds"]["stages"][0]
    assert stage["games_scheduled"] == 36 and not stage["settled"] and stage["complete"]
    assert [v["verdict"] for v in stage["verdicts"]] == ["not settled"] * 6
    assert [b["name"] for b in standings["bots"]] == list(stage["ratings"])  # ranked by the fit's ratings
    text = arena("standings", out, "--table", "settling")
    assert text.exit_code == 0 and "0 of 6 pairs settled, 36 of at most 36 games" in text.out, text.out


def test_a_swiss_reads_the_same_from_the_directory_its_games_and_the_file(tmp_path):
    path = field(tmp_path, BOTS7, "format: swiss\nrounds: 3\nbye: draw\n")
    assert played(arena("run", path)) == 18
    out = tmp_path / "out"
    game_id = records(out)[-1]["game_id"]
    from_dir, from_games, from_file = (readings(target, game_id) for target in (out, out / "games.jsonl", path))
    assert from_dir == from_games == from_file
    standings = json.loads(arena("standings", out, "-f", "json").out)
    # The ranking follows the Swiss's points: score plus a drawn game pair (1 point) for each bye.
    pairings = meta(out)["pairings"]
    byes = {bye: 1.0 for p in pairings for bye in p["byes"]}
    points = {b["name"]: b["score"] + byes.get(b["name"], 0.0) for b in standings["bots"]}
    assert [b["points"] for b in standings["bots"]] == [points[b["name"]] for b in standings["bots"]]
    assert [b["points"] for b in standings["bots"]] == sorted(points.values(), reverse=True)
    assert standings["rounds"]["pairings"] == pairings
    text = arena("standings", out, "--table", "rounds")
    assert text.exit_code == 0 and "Swiss, 3 of 3 paired" in text.out, text.out


def test_a_bot_that_cannot_start_is_not_paired_again_and_its_games_stay(tmp_path):
    path = field(tmp_path, BOTS7[:5], "format: swiss\nrounds: 3\nstartup_failures: forfeit\n")
    (tmp_path / "broken.py").write_text("import sys\nsys.exit(3)\n")
    path.write_text(path.read_text() + "  - {name: broken, cmd: python broken.py}\n")
    result = arena("run", path)
    assert result.exit_code == 0, result.err
    pairings = meta(tmp_path / "out")["pairings"]
    with_broken = [p["round"] for p in pairings for pair in p["pairs"] if "broken" in pair]
    assert with_broken == [1]  # paired in the first round, forfeited, then left out
    assert all("broken" not in p["byes"] for p in pairings[1:])
    forfeited = [r for r in records(tmp_path / "out") if "broken" in r["players"].values()]
    assert len(forfeited) == 2 and all(r["reason"] == "startup_failure" for r in forfeited)


def test_a_knockout_of_five_places_its_bots_and_lists_its_bracket(tmp_path):
    path = field(tmp_path, BOTS7[:5], "format: knockout\ntiebreak_pairs: 1\n")
    result = arena("run", path)
    assert result.exit_code == 0, result.err
    pairings = meta(tmp_path / "out")["pairings"]
    # 5 bots in a bracket of 8: seeds 1, 2 and 3 have byes, 4 meets 5.
    assert pairings[0]["pairs"] == [["bot1", None], ["bot4", "bot5"], ["bot2", None], ["bot3", None]]
    assert len(pairings) == 3
    standings = json.loads(arena("standings", tmp_path / "out", "-f", "json").out)
    places = {b["name"]: tuple(b["place"]) for b in standings["bots"]}
    final = standings["rounds"]["stages"][0]["bracket"][-1][0]
    semis = standings["rounds"]["stages"][0]["bracket"][1]
    assert places[final["winner"]] == (1, 1)
    assert places[next(b for b in final["bots"] if b != final["winner"])] == (2, 2)
    assert sorted(places[next(b for b in m["bots"] if b != m["winner"])] for m in semis) == [(3, 4), (3, 4)]
    assert sorted(places.values()).count((5, 5)) == 1
    text = arena("standings", tmp_path / "out", "--table", "bracket")
    assert text.exit_code == 0, text.err
    assert "3 (final)" in text.out and "bot1 (bye)" in text.out
    ranking = arena("standings", tmp_path / "out", "--table", "ranking").out
    assert "3–4" in ranking


def test_a_staged_tournament_resumes_between_and_within_its_stages(tmp_path):
    body = "stages:\n  - {format: swiss, rounds: 3}\n  - {format: knockout, top: 4, tiebreak_pairs: 1}\nconcurrency: 2\n"
    whole = field(tmp_path / "whole", BOTS7, body)
    result = arena("run", whole)
    assert result.exit_code == 0, result.err
    reference = meta(tmp_path / "whole" / "out")
    stages = [p["stage"] for p in reference["pairings"]]
    assert stages == [1, 1, 1, 2, 2]  # three Swiss rounds, then semi-finals and final
    full = records(tmp_path / "whole" / "out")
    standings = json.loads(arena("standings", tmp_path / "whole" / "out", "-f", "json").out)
    # The knockout's field: the Swiss's top 4, 1 against 4 and 2 against 3.
    swiss = standings["rounds"]["stages"][1]["field"]
    assert reference["pairings"][3]["pairs"] == [[swiss[0], swiss[3]], [swiss[1], swiss[2]]]
    # Its points column is the Swiss's, byes counted (a won game pair, 2 points), not every game's.
    swiss_points = {b: 2.0 * sum(b in p["byes"] for p in reference["pairings"][:3]) for b in BOTS7}
    for r in full:
        if r["round"] <= 3:
            for color, bot in r["players"].items():
                swiss_points[bot] += 0.5 if r["winner"] is None else float(r["winner"] == color)
    assert {b["name"]: b["points"] for b in standings["bots"]} == swiss_points
    assert [b["place"] for b in standings["bots"]][:2] == [[1, 1], [2, 2]]
    assert [b["place"] for b in standings["bots"]][4:] == [[5, 5], [6, 6], [7, 7]]

    out = tmp_path / "whole" / "out"
    game_id = full[-1]["game_id"]
    assert readings(out, game_id) == readings(out / "games.jsonl", game_id) == readings(whole, game_id)

    # Between the stages: the Swiss played, the knockout not paired yet.
    for cut, label in ((3, "between"), (4, "within")):
        out = tmp_path / label / "out"
        path = field(tmp_path / label, BOTS7, body)
        out.mkdir(parents=True)
        rounds = {p["round"] for p in reference["pairings"][:cut]}
        kept = [r for r in full if r["round"] in rounds]
        if label == "within":
            kept = kept[:-1]  # one game of the semi-finals still to play
        (out / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
        (out / "tournament.json").write_text(json.dumps(reference | {"pairings": reference["pairings"][:cut]}))
        resumed = arena("run", path)
        assert resumed.exit_code == 0, resumed.err
        assert played(resumed) == len(full) - len(kept)
        assert meta(out)["pairings"] == reference["pairings"]
        assert outcomes(out) == outcomes(tmp_path / "whole" / "out")


def test_seed_from_seeds_a_knockout_by_an_earlier_tournament_s_ranking(tmp_path):
    first = field(tmp_path / "league", BOTS7[:4], "")
    assert arena("run", first).exit_code == 0
    ranked = [b["name"] for b in json.loads(arena("standings", tmp_path / "league" / "out", "-f", "json").out)["bots"]]
    cup = field(tmp_path / "cup", BOTS7[:4], f"format: knockout\nseed_from: {tmp_path / 'league' / 'out'}\n")
    result = arena("run", cup)
    assert result.exit_code == 0, result.err
    stored = meta(tmp_path / "cup" / "out")
    assert stored["seeding"] == ranked
    assert stored["pairings"][0]["pairs"] == [[ranked[0], ranked[3]], [ranked[1], ranked[2]]]
    # Once the seeding is kept, the directory it came from may go.
    before = arena("standings", cup, "-f", "json").out
    shutil.rmtree(tmp_path / "league")
    assert arena("standings", cup, "-f", "json").out == before
    again = arena("run", cup)
    assert again.exit_code == 0 and played(again) == 0, again.err


@pytest.mark.parametrize("body, needles", [
    ("format: swiss\n", ("rounds", "a Swiss needs rounds")),
    ("format: swiss\nrounds: 7\n", ("rounds", "at most 6 Swiss rounds")),
    ("format: knockout\nrounds: 2\n", ("rounds", "a knockout's rounds follow from its field")),
    ("stages:\n  - {format: swiss, rounds: 2}\n  - {format: knockout}\n", ("top", "required key missing")),
    ("format: swiss\nrounds: 2\nseed_from: nowhere\n", ("seed_from", "no such file or directory", "nowhere")),
])
def test_a_broken_large_field_setting_is_one_line(tmp_path, body, needles):
    path = field(tmp_path, BOTS7, body)
    assert_one_line_error(arena("run", path), *needles)


def test_the_example_cup_reads():
    from arena.run.config import load_config

    config = load_config(ROOT / "tournaments" / "cup-oxono.yaml")
    assert [(s.format, s.rounds if s.format == "swiss" else s.top) for s in config.competition.stages] == [("swiss", 3), ("knockout", 4)]
    assert config.competition.rules.ranking == "points" and len(config.bots) == 8


def test_seed_from_a_reference_tournament_takes_its_entrants_order(tmp_path):
    graded = field(tmp_path / "graded", BOTS7[:5], "format: reference\nreference: [bot1]\n")
    assert arena("run", graded).exit_code == 0
    standings = json.loads(arena("standings", tmp_path / "graded" / "out", "-f", "json").out)
    entrants = standings["entrants"]
    cup = field(tmp_path / "cup", BOTS7[:5], f"format: knockout\nseed_from: {tmp_path / 'graded' / 'out'}\n")
    result = arena("run", cup)
    assert result.exit_code == 0, result.err
    assert meta(tmp_path / "cup" / "out")["seeding"] == [*entrants, "bot1"]


def test_a_swiss_given_more_rounds_pairs_a_late_bot_from_the_next_round_and_keeps_the_rounds_played(tmp_path):
    path = field(tmp_path, BOTS7[:6], "format: swiss\nrounds: 2\n")
    assert played(arena("run", path)) == 12
    before = meta(tmp_path / "out")["pairings"]
    path = field(tmp_path, BOTS7, "format: swiss\nrounds: 3\n")  # bot7 joins; one round more
    more = arena("run", path)
    assert more.exit_code == 0, more.err
    assert played(more) == 6  # 7 bots: 3 pairings and a bye
    after = meta(tmp_path / "out")["pairings"]
    assert after[:2] == before
    third = {b for pair in after[2]["pairs"] for b in pair} | set(after[2]["byes"])
    assert third == set(BOTS7)
    assert meta(tmp_path / "out")["seeding"] == BOTS7  # the late bot seeded last
    shrink = field(tmp_path, BOTS7, "format: knockout\n")
    assert_one_line_error(arena("run", shrink), "format 'swiss'", "'knockout'")


def test_a_changed_bot_in_a_swiss_replays_its_games_in_their_rounds_and_pairs_nothing_again(tmp_path):
    path = field(tmp_path, BOTS7[:5], "format: swiss\nrounds: 3\n")
    assert played(arena("run", path)) == 12
    pairings = meta(tmp_path / "out")["pairings"]
    theirs = sorted(r["game_id"] for r in records(tmp_path / "out") if "bot3" in r["players"].values())
    (tmp_path / "bot3.py").write_text((tmp_path / "bot3.py").read_text() + "\n# fixed\n")
    assert_one_line_error(arena("run", path), "bot3", "--replay bot3")
    replay = arena("run", path, "--replay", "bot3")
    assert replay.exit_code == 0, replay.err
    assert played(replay) == len(theirs)
    assert meta(tmp_path / "out")["pairings"] == pairings
    archived = [json.loads(line)["record"]["game_id"] for line in (tmp_path / "out" / "replaced.jsonl").read_text().splitlines()]
    assert sorted(archived) == theirs


def test_a_bot_knocked_out_that_no_longer_starts_does_not_stop_the_final(tmp_path):
    path = field(tmp_path, BOTS7[:4], "format: knockout\ntiebreak_pairs: 0\n")
    # Declared versions: a program that changes under them is not caught, so only its starting matters here.
    path.write_text(path.read_text().replace(".py}", ".py, version: '1'}"))
    assert played(arena("run", path)) == 6
    out = tmp_path / "out"
    whole, stored = records(out), meta(out)
    # Back to the state after the semi-finals, the final not yet paired.
    (out / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in whole if r["round"] == 1))
    (out / "tournament.json").write_text(json.dumps(stored | {"pairings": stored["pairings"][:1]}))
    finalists = set(stored["pairings"][1]["pairs"][0])
    knocked_out = sorted(set(BOTS7[:4]) - finalists)
    for bot in knocked_out:
        (tmp_path / f"{bot}.py").write_text("import sys\nsys.exit(3)\n")
    final = arena("run", path)
    assert final.exit_code == 0, final.err
    assert played(final) == 2
    assert outcomes(out) == {r["game_id"]: (tuple(r["players"].values()), r["winner"], r["reason"]) for r in whole}
    assert "did not start" not in final.err
