"""``format: adaptive``: the Bradley–Terry fit and its verdicts against
numbers computed here another way, the pairs a round takes on hand-built
result tables, and the stop rule through the runner's own loop
(:class:`builders.Run`), every game decided by the test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest

from arena.formats import adaptive
from arena.formats.adaptive import ELO_PER_NAT, MAX_IDLE, MIN_PRIOR_ELO, PRIOR_ELO, SEPARATED, TIED, UNSETTLED, adaptive_round, fit, \
    idle_rounds, in_scope, ranking, verdicts
from arena.formats.competition import Rules
from arena.formats.progression import estimated_games, rounds_schedule
from arena.formats.stages import Stage, StageEntry
from arena.results.standings import compute_standings
from arena.results.tables import render_standings
from arena.run.config import ConfigError
from builders import better_seed, bisect, names, start, tournament, winner_by

PRIOR = (ELO_PER_NAT / PRIOR_ELO) ** 2  # the prior's precision, per nat²


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _two_bots(points: float, games: int) -> tuple[float, float]:
    """The posterior mode of a − b (Elo) and its variance (Elo²) for two bots,
    a having ``points`` of ``games``.  By symmetry θa = −θb = t, where
    prior·t = points − games·σ(2t); the Hessian is [[P+w, −w], [−w, P+w]]
    with w = games·p(1−p), so var θa = (P+w) / (P(P+2w)) and var(θa − θb) =
    2 / (P+2w).  The prior's precision P is first the wide one, then one
    over the field's spread t² + var θa, within its bounds."""
    def mode(prior: float) -> tuple[float, float]:
        t = bisect(lambda x: prior * x - (points - games / (1 + math.exp(-2 * x))), -20, 20)
        p = 1 / (1 + math.exp(-2 * t))
        return t, games * p * (1 - p)

    t, w = mode(PRIOR)
    prior = min(max(1 / (t * t + (PRIOR + w) / (PRIOR * (PRIOR + 2 * w))), PRIOR), (ELO_PER_NAT / MIN_PRIOR_ELO) ** 2)
    t, w = mode(prior)
    return 2 * t * ELO_PER_NAT, 2 / (prior + 2 * w) * ELO_PER_NAT ** 2


# -- the fit and the verdicts --------------------------------------------------------


@pytest.mark.parametrize("points, games", [(7.0, 10), (10.0, 10), (5.0, 10), (31.5, 40), (0.0, 4)])
def test_two_bots_fit_as_the_closed_form_says(points: float, games: int) -> None:
    model = fit(["a", "b"], {("a", "b"): (points, games)})
    diff, var = _two_bots(points, games)
    assert model.elo["a"] - model.elo["b"] == pytest.approx(diff, abs=1e-6)
    assert model.elo["a"] == pytest.approx(-model.elo["b"], abs=1e-6)
    assert model.var_diff("a", "b") == pytest.approx(var, rel=1e-6)


def test_three_bots_fit_at_the_zero_of_the_gradient_with_the_inverse_hessian() -> None:
    results = {("a", "b"): (6.0, 8), ("b", "c"): (5.5, 8), ("a", "c"): (3.0, 4)}
    model = fit(["a", "b", "c"], results)
    theta = {b: model.elo[b] / ELO_PER_NAT for b in "abc"}
    likelihood = dict.fromkeys("abc", 0.0)  # the log-likelihood's gradient
    hess = {(i, j): 0.0 for i in "abc" for j in "abc"}
    for (a, b), (s, g) in results.items():
        p = 1 / (1 + math.exp(theta[b] - theta[a]))
        likelihood[a] += s - g * p
        likelihood[b] -= s - g * p
        w = g * p * (1 - p)
        hess[a, a] += w
        hess[b, b] += w
        hess[a, b] -= w
        hess[b, a] -= w
    # At the mode, the prior's pull P·θ balances the likelihood's for every bot, with one P.
    prior = likelihood["a"] / theta["a"]
    assert likelihood["b"] / theta["b"] == pytest.approx(prior, rel=1e-6)
    assert likelihood["c"] / theta["c"] == pytest.approx(prior, rel=1e-6)
    assert PRIOR <= prior <= (ELO_PER_NAT / MIN_PRIOR_ELO) ** 2
    # The covariance: the inverse of the posterior's Hessian, by its cofactors.
    m = [[hess[i, j] + (prior if i == j else 0.0) for j in "abc"] for i in "abc"]
    det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
           + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    inv = [[(m[(j + 1) % 3][(i + 1) % 3] * m[(j + 2) % 3][(i + 2) % 3]
             - m[(j + 1) % 3][(i + 2) % 3] * m[(j + 2) % 3][(i + 1) % 3]) / det for j in range(3)] for i in range(3)]
    for i, a in enumerate("abc"):
        for j, b in enumerate("abc"):
            assert model.cov[i][j] == pytest.approx(inv[i][j] * ELO_PER_NAT ** 2, rel=1e-6)
    assert ranking(["c", "b", "a"], model) == ["a", "b", "c"]


def _anytime_p(d: float, sd: float, scale: float = 200.0) -> float:
    """One over the mixture likelihood ratio ∫ exp(I·δ·d − I·δ²/2) dπ(δ), I = 1/sd²,
    π half-normal of sd ``scale`` on δ > 0: computed here by the trapezoid rule."""
    info, steps, top = 1 / sd ** 2, 20000, 10 * scale
    h = top / steps
    values = [math.exp(info * x * d - info * x * x / 2) * 2 * math.exp(-x * x / (2 * scale ** 2))
              / (scale * math.sqrt(2 * math.pi)) for x in (k * h for k in range(steps + 1))]
    ratio = h * (sum(values) - (values[0] + values[-1]) / 2)
    return min(1.0, 1 / ratio)


def _bh(p: list[float], alpha: float) -> set[int]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    k = max([r for r in range(1, len(p) + 1) if p[order[r - 1]] <= r * alpha / len(p)], default=0)
    return set(order[:k])


@pytest.mark.parametrize("results, confidence, within, expected", [
    ({("a", "b"): (30.0, 40), ("b", "c"): (40.0, 80)}, 0.95, 50.0, [UNSETTLED, UNSETTLED]),
    ({("a", "b"): (90.0, 120), ("b", "c"): (200.0, 400)}, 0.9, 100.0, [SEPARATED, TIED]),
    ({("a", "b"): (90.0, 120), ("b", "c"): (200.0, 400)}, 0.9, 30.0, [SEPARATED, UNSETTLED]),
])
def test_verdicts_are_anytime_tests_under_benjamini_hochberg(results: dict, confidence: float, within: float,
                                                             expected: list[str]) -> None:
    model = fit(["a", "b", "c"], results)
    order = ranking(["a", "b", "c"], model)
    said = verdicts(order, model, confidence, within)
    diffs = [(model.elo[v.better] - model.elo[v.worse], math.sqrt(model.var_diff(v.better, v.worse))) for v in said]
    for v, (d, sd) in zip(said, diffs):
        assert v.p_order == pytest.approx(_phi(d / sd), abs=1e-9)
        assert v.p_tied == pytest.approx(_phi((within - d) / sd) - _phi((-within - d) / sd), abs=1e-9)
    apart = _bh([_anytime_p(d, sd) for d, sd in diffs], 1 - confidence)
    rest = [i for i in range(len(said)) if i not in apart]
    within_p = [max(_anytime_p(within - d, sd), _anytime_p(within + d, sd)) for d, sd in (diffs[i] for i in rest)]
    tied = {rest[i] for i in _bh(within_p, 1 - confidence)}
    assert [v.status for v in said] == [SEPARATED if i in apart else TIED if i in tied else UNSETTLED
                                        for i in range(len(said))] == expected


def test_a_pair_is_not_separated_on_its_posterior_alone() -> None:
    # 95.5 % sure of the order, as a single look at the posterior says; looked at round after round,
    # that is not evidence enough.
    model = fit(["a", "b"], {("a", "b"): (26.0, 40)})
    (verdict,) = verdicts(["a", "b"], model, 0.95, 0.0)
    assert verdict.p_order > 0.95 and verdict.status == UNSETTLED


def test_equal_ratings_rank_in_seeding_order_and_scope_stops_at_top() -> None:
    model = fit(["x", "y", "z"], {})
    assert ranking(["y", "z", "x"], model) == ["y", "z", "x"]
    said = verdicts(["y", "z", "x"], model, 0.95, 20.0)
    assert in_scope(said, 1) == said[:1] and in_scope(said, None) == said


# -- the pairs of a round -------------------------------------------------------------


def _settled_top_and_open_bottom() -> tuple[list[str], dict]:
    """s1..s4 far apart over many games, s4 far above s5 too, s5..s8 a
    draw each with s5: the top three pairs are settled, from s4 down not."""
    bots = names(8)
    results = {("s1", "s2"): (38.0, 40), ("s2", "s3"): (38.0, 40), ("s3", "s4"): (38.0, 40),
               ("s4", "s5"): (38.0, 40), ("s5", "s6"): (1.0, 2), ("s5", "s7"): (1.0, 2), ("s5", "s8"): (1.0, 2)}
    return bots, results


def test_a_round_spends_its_games_on_the_pairs_not_settled() -> None:
    bots, results = _settled_top_and_open_bottom()
    model = fit(bots, results)
    order = ranking(bots, model)
    said = verdicts(order, model, 0.95, 20.0)
    open_bots = {b for v in said if not v.settled for b in (v.better, v.worse)}
    assert [v.status for v in said[:3]] == [SEPARATED] * 3 and open_bots == {"s4", "s5", "s6", "s7", "s8"}
    pairs, odd_out = adaptive_round(order, model, said, dict.fromkeys(bots, 0), {}, 1, 5, 100)
    # The settled bots sit this round out but s3, the nearest, which makes the open ones even.
    assert {b for p in pairs for b in p} == open_bots | {"s3"} and odd_out is None and len(pairs) == 3
    assert all(abs(order.index(a) - order.index(b)) <= 4 for a, b in pairs)


def test_a_settled_bot_idle_for_max_idle_rounds_plays_again() -> None:
    bots, results = _settled_top_and_open_bottom()
    model = fit(bots, results)
    order = ranking(bots, model)
    said = verdicts(order, model, 0.95, 20.0)
    idle = dict.fromkeys(bots, 0) | {"s1": MAX_IDLE, "s2": MAX_IDLE - 1, "s3": 1}
    pairs, odd_out = adaptive_round(order, model, said, idle, {}, 1, 5, 100)
    played = {b for p in pairs for b in p}
    # s1 is overdue: it plays with the open ones; s2 waits a round more.
    assert played == {"s1", "s4", "s5", "s6", "s7", "s8"} and odd_out is None


def test_the_same_pair_does_not_meet_twice_in_a_row_while_others_are_open() -> None:
    bots = ["a", "b", "c", "d"]
    model = fit(bots, {})
    said = verdicts(bots, model, 0.95, 20.0)
    first, _ = adaptive_round(bots, model, said, dict.fromkeys(bots, 0), {}, 1, 1, 100)
    last = {x: y for a, b in first for x, y in ((a, b), (b, a))}
    second, _ = adaptive_round(bots, model, said, dict.fromkeys(bots, 0), last, 1, 2, 100)
    assert not {frozenset(p) for p in first} & {frozenset(p) for p in second}


def test_an_odd_field_leaves_out_one_bot_and_room_caps_the_pairs() -> None:
    bots = names(5)
    model = fit(bots, {})
    said = verdicts(bots, model, 0.95, 20.0)
    pairs, odd_out = adaptive_round(bots, model, said, dict.fromkeys(bots, 0), {}, 3, 1, 100)
    assert len(pairs) == 2 and odd_out is not None
    assert sorted([odd_out, *(b for p in pairs for b in p)]) == sorted(bots)
    assert len(adaptive_round(bots, model, said, dict.fromkeys(bots, 0), {}, 3, 1, 1)[0]) == 1


def test_idle_rounds_count_from_the_last_round_played() -> None:
    assert idle_rounds(["a", "b", "c"], [{"a", "b"}, {"a", "c"}, {"a", "b"}]) == {"a": 0, "b": 0, "c": 1}
    assert idle_rounds(["d"], [{"a"}, {"a"}]) == {"d": 2}


# -- through the runner's loop -------------------------------------------------------


def adaptive_file(tmp_path: Path, bots: int, settle: str, max_games: int, extra: str = ""):
    return tournament(tmp_path, bots, f"format: adaptive\nmax_games: {max_games}\nsettle: {settle}\n{extra}")


def test_a_clearly_separated_field_stops_early_every_pair_separated(tmp_path: Path) -> None:
    run = start(adaptive_file(tmp_path, 6, "{confidence: 0.9, within_elo: 50}", 2000)).play(better_seed)
    rounds = run.rounds
    stage = rounds.stages[0]
    assert rounds.finished and stage.settled
    # Under a quarter of its budget; a bot that wins every game tells little a game about by how much.
    assert stage.spent == len(run.records) < 500
    assert stage.order == names(6)
    assert [v.status for v in stage.verdicts] == [SEPARATED] * 5
    # Stopped at the first round where every pair was separated: the round before, one was not.
    (tmp_path / "b").mkdir()
    before = start(adaptive_file(tmp_path / "b", 6, "{confidence: 0.9, within_elo: 50}", 2000))
    before.play(better_seed, until_round=len(run.pairings) - 1)
    assert not before.rounds.stages[0].settled


def test_two_equal_bots_end_tied_within_n(tmp_path: Path) -> None:
    run = start(adaptive_file(tmp_path, 2, "{confidence: 0.9, within_elo: 150}", 1000)).play(winner_by(lambda s: None))
    stage = run.rounds.stages[0]
    assert run.rounds.finished and stage.spent < 1000
    (verdict,) = stage.verdicts
    assert verdict.status == TIED
    # At the stop, by the closed form and the mixture's integral: both "150 Elo apart or more" are
    # refuted at 0.1 (one pair: Benjamini–Hochberg is the test itself), not one game pair before.
    diff, var = _two_bots(stage.spent / 2, stage.spent)
    assert diff == pytest.approx(0.0, abs=1e-9)
    assert _anytime_p(150, math.sqrt(var)) <= 0.1
    _, before = _two_bots(stage.spent / 2 - 1, stage.spent - 2)
    assert _anytime_p(150, math.sqrt(before)) > 0.1
    standings = compute_standings(run.records, names(2), Rules(ranking="points"), rounds=run.rounds)
    text = render_standings(standings, table="settling")
    assert "tied within 150 Elo" in text and f"{stage.spent} of at most 1,000 games" in text


def test_two_equal_bots_without_a_tie_margin_play_to_max_games(tmp_path: Path) -> None:
    run = start(adaptive_file(tmp_path, 3, "{confidence: 0.95, within_elo: 0}", 31)).play(winner_by(lambda s: None))
    stage = run.rounds.stages[0]
    assert run.rounds.finished and not stage.settled
    assert stage.spent == len(run.records) == 30  # never past max_games: a game pair more would be 32
    assert all(v.status == UNSETTLED for v in stage.verdicts)
    standings = compute_standings(run.records, names(3), Rules(ranking="points"), rounds=run.rounds)
    text = render_standings(standings)
    first_note = next(line.strip() for line in text.splitlines() if line.startswith("  ranked by"))
    assert first_note.startswith("ranked by the adaptive stage's Bradley–Terry ratings")
    assert ("separated (the better is the stronger) or tied within 0 Elo under a Bradley–Terry fit, at most 5% of "
            "either declared wrongly (confidence 0.95)") in first_note
    assert "or at 31 games" in first_note
    assert "not settled" in render_standings(standings, table="settling")


def test_the_first_stage_feeds_a_knockout_of_its_top_four(tmp_path: Path) -> None:
    stages = "stages:\n  - {format: adaptive, max_games: 200, settle: {confidence: 0.9, top: 4}}\n  - {format: knockout, top: 4}\n"
    run = start(tournament(tmp_path, 8, stages)).play(better_seed)
    first, knockout = run.rounds.stages
    assert first.complete and knockout.complete
    assert knockout.field == first.order[:4] == names(4)
    # The knockout places the top four; the rule needed the order down to place 5 only.
    assert [b for b, _ in run.rounds.places()][:5] == names(5)
    assert len(in_scope(first.verdicts, 4)) == 4


def test_a_withdrawn_bot_is_not_paired_and_the_rule_stops_waiting_for_it(tmp_path: Path) -> None:
    config = adaptive_file(tmp_path, 6, "{confidence: 0.9, within_elo: 50}", 120, "withdrawn: [s3]\n")
    run = start(config).play(better_seed)
    assert all("s3" not in r.players.values() for r in run.records) and len(run.records) == 120
    stage = run.rounds.stages[0]
    # Its results stand and it keeps its place, but no verdict waits on it: s2 and s4 are neighbours.
    assert "s3" not in stage.in_play and "s3" in stage.order
    assert [(v.better, v.worse) for v in stage.verdicts] == [("s1", "s2"), ("s2", "s4"), ("s4", "s5"), ("s5", "s6")]


def test_a_late_bot_is_paired_until_it_is_placed(tmp_path: Path) -> None:
    settle = "{confidence: 0.9, within_elo: 50}"
    run = start(adaptive_file(tmp_path, 6, settle, 2000)).play(better_seed, until_round=3)
    (tmp_path / "late").mkdir()
    late = tournament(tmp_path / "late", [*names(6), "s0"], f"format: adaptive\nmax_games: 2000\nsettle: {settle}\n")
    run.config = late
    run.seeding = [*run.seeding, "s0"]
    # s0 is the strongest: better_seed makes the lowest number win.
    run.play(better_seed)
    stage = run.rounds.stages[0]
    assert stage.settled and stage.order[0] == "s0"
    assert sum("s0" in r.players.values() for r in run.records) >= 4


def test_estimated_games_count_the_budget_left(tmp_path: Path) -> None:
    run = start(adaptive_file(tmp_path, 6, "{confidence: 0.95, within_elo: 0}", 100)).play(better_seed, until_round=2)
    rounds = run.rounds
    scheduled = len(rounds_schedule(run.config.competition, rounds))
    assert scheduled == 12 == rounds.stages[0].spent
    assert estimated_games(run.config.competition, rounds, scheduled) == 100
    assert rounds.describe() == "round 2: 12 of at most 100 games"
    # Settled before its budget: the games it has are all it will have.
    (tmp_path / "settled").mkdir()
    done = start(adaptive_file(tmp_path / "settled", 2, "{confidence: 0.9, within_elo: 150}", 1000))
    done.play(winner_by(lambda s: None))
    assert done.rounds.finished and len(done.records) < 1000
    assert estimated_games(done.config.competition, done.rounds, len(done.records)) == len(done.records)


def test_pairings_are_a_function_of_the_results(tmp_path: Path) -> None:
    decide = winner_by(lambda spec: min(spec.players, key=lambda b: (hash_of(spec.game_id), b)))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = start(adaptive_file(tmp_path / "a", 10, "{confidence: 0.9}", 120)).play(decide)
    two = start(adaptive_file(tmp_path / "b", 10, "{confidence: 0.9}", 120)).play(decide)
    assert one.pairings == two.pairings and len(one.pairings) > 3
    # Halfway, a loop that starts from the stored pairings and the records alone pairs the next round alike.
    (tmp_path / "c").mkdir()
    half = start(adaptive_file(tmp_path / "c", 10, "{confidence: 0.9}", 120))
    half.pairings, half.records = one.pairings[:3], [r for r in one.records if r.round <= 3]
    half.advance()
    assert half.pairings == one.pairings[:4]


def test_reading_the_stage_after_every_game_fits_it_once_a_round(tmp_path: Path, monkeypatch) -> None:
    fits = []
    real = adaptive.bradley_terry

    def counted(n, results, prior=0.0, start=None):
        if start is None:  # a fit's first Newton run: one per fit
            fits.append(len(results))
        return real(n, results, prior, start)

    monkeypatch.setattr(adaptive, "bradley_terry", counted)
    monkeypatch.setattr(adaptive, "_fits", {})
    run = start(adaptive_file(tmp_path, 6, "{confidence: 0.95, within_elo: 0}", 60))
    reads = 0
    while pending := run.advance():
        for spec in pending:
            run.records.append(better_seed(spec))
            model = run.rounds.stages[0].model  # as the run reads its rounds after every game
            reads += 1
    assert len(run.pairings) >= 4 and reads == len(run.records) > 2 * len(run.pairings)
    # Before the first round, then once each round is all in: never for a game of a round in play.
    assert len(fits) == len(run.pairings) + 1
    assert fits == sorted(fits) and fits[0] == 0
    # The fit read last is of every game.
    assert sum(model.elo.values()) == pytest.approx(0.0, abs=1e-6)
    final = fit(names(6), {(a, b): (sum(r.winner is not None and r.players[r.winner] == a for r in run.records
                                          if set(r.players.values()) == {a, b}) * 1.0,
                                      sum(set(r.players.values()) == {a, b} for r in run.records))
                           for a in names(6) for b in names(6) if a < b})
    assert model.elo == pytest.approx(final.elo)


def hash_of(text: str) -> int:
    import hashlib

    return hashlib.sha256(text.encode()).digest()[0]


# -- the file and tournament.json ------------------------------------------------------


def test_stage_round_trips_through_json() -> None:
    stage = Stage("adaptive", confidence=0.9, within_elo=35.0, settle_top=4, max_games=500)
    entry = json.loads(json.dumps(stage.to_json()))
    assert entry == {"format": "adaptive", "settle": {"confidence": 0.9, "within_elo": 35.0, "top": 4}, "max_games": 500}
    assert msgspec.convert(entry, StageEntry).stage() == stage


@pytest.mark.parametrize("entry", [
    {"format": "adaptive"},
    {"format": "adaptive", "max_games": 1},
    {"format": "adaptive", "max_games": 10, "settle": {"confidence": 1.0}},
    {"format": "adaptive", "max_games": 10, "settle": {"confidence": "nan"}},
    {"format": "adaptive", "max_games": 10, "settle": {"within_elo": -1}},
    {"format": "adaptive", "max_games": 10, "settle": {"top": 0}},
    {"format": "adaptive", "max_games": 10, "settle": "tight"},
])
def test_a_stage_entry_refuses_what_is_not_an_adaptive_stage(entry: dict) -> None:
    with pytest.raises(ValueError):
        msgspec.convert(entry, StageEntry).stage()


@pytest.mark.parametrize("text, message", [
    ("format: adaptive\n", "max_games: an adaptive stage needs max_games"),
    ("format: adaptive\nmax_games: 40\nrounds: 3\n", "rounds: an adaptive stage plays until it settles"),
    ("format: adaptive\nmax_games: 40\nsettle: {confidence: 0.3}\n", "confidence: must be between 0.5 and 1"),
    ("format: adaptive\nmax_games: 40\nsettle: {top: 9}\n", "top: must be from 1 to the 4 bots"),
    ("format: adaptive\nmax_games: 40\nsettle: {margin: 9}\n", "margin"),
    ("format: swiss\nrounds: 2\nmax_games: 40\n", "does not go with format: swiss"),
    ("format: round-robin\nsettle: {confidence: 0.9}\n", "goes with format: adaptive"),
])
def test_the_file_refuses_a_bad_adaptive_stage_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        tournament(tmp_path, 4, text)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_bot_taken_out_of_the_file_is_ranked_by_nobody_and_not_paired(tmp_path: Path) -> None:
    settle = "{confidence: 0.9, within_elo: 50}"
    run = start(adaptive_file(tmp_path, 6, settle, 300)).play(better_seed, until_round=2)
    (tmp_path / "less").mkdir()
    run.config = tournament(tmp_path / "less", [b for b in names(6) if b != "s3"],
                            f"format: adaptive\nmax_games: 300\nsettle: {settle}\n")
    played = len(run.records)
    run.play(better_seed)
    assert all("s3" not in r.players.values() for r in run.records[played:])
    stage = run.rounds.stages[0]
    assert stage.order[-1] == "s3" and [b for b, _ in run.rounds.places()] == ["s1", "s2", "s4", "s5", "s6"]
    standings = compute_standings(run.records, [b for b in names(6) if b != "s3"], Rules(ranking="points"), rounds=run.rounds)
    assert [b.name for b in standings.bots][:5] == ["s1", "s2", "s4", "s5", "s6"]


def test_a_swiss_then_an_adaptive_stage_of_its_top_four(tmp_path: Path) -> None:
    stages = ("stages:\n  - {format: swiss, rounds: 3}\n"
              "  - {format: adaptive, top: 4, max_games: 40, settle: {confidence: 0.9, within_elo: 0}}\n")
    run = start(tournament(tmp_path, 8, stages)).play(better_seed)
    swiss, adaptive = run.rounds.stages
    assert adaptive.field == swiss.order[:4] and adaptive.complete and adaptive.spent == 40
    assert all(p.round > 3 and {b for pair in p.pairs for b in pair} <= set(adaptive.field)
               for p in run.pairings if p.stage == 2)
    assert [b for b, _ in run.rounds.places()][:4] == adaptive.order


def test_the_rounds_table_of_an_adaptive_stage_counts_no_rounds_ahead(tmp_path: Path) -> None:
    run = start(adaptive_file(tmp_path, 4, "{confidence: 0.95}", 100)).play(better_seed, until_round=2)
    standings = compute_standings(run.records, names(4), Rules(ranking="points"), rounds=run.rounds)
    assert "Rounds (adaptive, 2 paired)" in render_standings(standings, table="rounds")
