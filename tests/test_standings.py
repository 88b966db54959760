"""Tests for arena.results.standings: TrueSkill folding in schedule order and tallies."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.formats.competition import Rules
from arena.game.records import GameRecord, MoveRecord
from arena.formats.scoring import Tally
from arena.results.standings import (DRAW_PROBABILITY, INITIAL_MU, INITIAL_SIGMA, RunningLeader, _rating, compute_standings,
                                     rating_env)
from builders import better_seed, record, start, tournament

BOTS = ("alpha", "beta", "gamma")


def game(index: int, pink: str, black: str, winner: str | None, *, move_ms: tuple[float, ...] = (),
         **fields: Any) -> GameRecord:
    """A finished OXONO game: ``winner`` and ``forfeit_by`` are colours; its moves take ``move_ms``."""
    return record(index, pink, black, winner, moves=[MoveRecord(f"m{i}", ms) for i, ms in enumerate(move_ms)], **fields)


def expected_ratings(results: list[tuple[str, str, str | None]]) -> dict[str, trueskill.Rating]:
    """Fold (first bot, second bot, winner name or None) with trueskill directly."""
    env = trueskill.TrueSkill(mu=25.0, sigma=25.0 / 3, draw_probability=0.10)
    ratings: dict[str, trueskill.Rating] = {}
    for a, b, winner in results:
        ra, rb = ratings.get(a, env.create_rating()), ratings.get(b, env.create_rating())
        if winner == b:
            rb, ra = trueskill.rate_1vs1(rb, ra, env=env)
        else:
            ra, rb = trueskill.rate_1vs1(ra, rb, drawn=winner is None, env=env)
        ratings[a], ratings[b] = ra, rb
    return ratings


def by_name(standings):
    return {bot.name: bot for bot in standings.bots}


def test_defaults_are_trueskills():
    assert (INITIAL_MU, INITIAL_SIGMA, DRAW_PROBABILITY) == (25.0, 25.0 / 3, 0.10)


def test_bot_winning_every_game_ranks_first_with_trueskill_values():
    records = [
        game(0, "gamma", "alpha", "black"),
        game(1, "alpha", "beta", "pink"),
        game(2, "beta", "gamma", "pink"),
        game(3, "beta", "alpha", "black"),
        game(4, "alpha", "gamma", "pink"),
        game(5, "gamma", "beta", "black"),
    ]
    standings = compute_standings(records)
    assert [b.name for b in standings.bots] == ["alpha", "beta", "gamma"]
    expected = expected_ratings(
        [("gamma", "alpha", "alpha"), ("alpha", "beta", "alpha"), ("beta", "gamma", "beta"),
         ("beta", "alpha", "alpha"), ("alpha", "gamma", "alpha"), ("gamma", "beta", "beta")]
    )
    for bot in standings.bots:
        assert bot.mu == pytest.approx(expected[bot.name].mu, abs=1e-12)
        assert bot.sigma == pytest.approx(expected[bot.name].sigma, abs=1e-12)
        assert bot.rating == pytest.approx(bot.mu - 3 * bot.sigma)
    ratings = [b.rating for b in standings.bots]
    assert ratings == sorted(ratings, reverse=True)


def test_ranking_is_by_conservative_rating_not_mu():
    # One lucky win leaves a high mu but a wide sigma; many steady results give
    # a lower mu but a narrower sigma, hence the higher mu - 3 sigma.
    records = [game(0, "lucky", "x", "pink")]
    records += [game(i, "steady", f"y{i % 2}", "pink" if i % 3 else "black") for i in range(1, 40)]
    standings = compute_standings(records)
    bots = by_name(standings)
    assert bots["lucky"].mu > bots["steady"].mu
    assert bots["steady"].rating > bots["lucky"].rating
    names = [b.name for b in standings.bots]
    assert names.index("steady") < names.index("lucky")


def test_draws_are_rated_as_draws():
    draws = compute_standings([game(i, "alpha", "beta", None) for i in range(6)])
    bots = by_name(draws)
    expected = expected_ratings([("alpha", "beta", None)] * 6)
    assert bots["alpha"].mu == pytest.approx(bots["beta"].mu, abs=1e-9)
    assert bots["alpha"].mu == pytest.approx(expected["alpha"].mu, abs=1e-12)
    assert bots["alpha"].sigma == pytest.approx(expected["alpha"].sigma, abs=1e-12)
    assert bots["alpha"].sigma < INITIAL_SIGMA
    assert (bots["alpha"].draws, bots["alpha"].wins, bots["alpha"].losses) == (6, 0, 0)

    wins = by_name(compute_standings([game(i, "alpha", "beta", "pink") for i in range(6)]))
    assert wins["alpha"].mu != pytest.approx(bots["alpha"].mu, abs=0.5)
    assert wins["alpha"].mu > bots["alpha"].mu > wins["beta"].mu


def test_input_order_does_not_matter_but_index_order_does():
    records = [
        game(0, "alpha", "beta", "pink"),
        game(1, "beta", "gamma", None),
        game(2, "gamma", "alpha", "pink"),
        game(3, "beta", "alpha", "pink"),
        game(4, "alpha", "gamma", None),
        game(5, "gamma", "beta", "black"),
    ]
    reference = compute_standings(records)
    for seed in range(5):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        assert compute_standings(shuffled) == reference

    # Same games, schedule order reversed: the fold follows the indices.
    reindexed = [game(5 - r.index, r.players["pink"], r.players["black"], r.winner) for r in records]
    reversed_standings = compute_standings(reindexed)
    assert by_name(reversed_standings)["alpha"].mu != pytest.approx(by_name(reference)["alpha"].mu, abs=1e-6)
    expected = expected_ratings(
        [(r.players["pink"], r.players["black"], r.name_of(r.winner)) for r in sorted(reindexed, key=lambda r: r.index)]
    )
    for bot in reversed_standings.bots:
        assert bot.mu == pytest.approx(expected[bot.name].mu, abs=1e-12)


def test_forfeits_are_losses_counted_by_reason_for_the_forfeiter():
    records = [
        game(0, "alpha", "beta", "black", reason="timeout", forfeit_by="pink"),
        game(1, "beta", "alpha", "black", reason="crash", forfeit_by="pink"),
        game(2, "alpha", "beta", "black", reason="timeout", forfeit_by="pink"),
        game(3, "beta", "alpha", "pink", reason="illegal_move", forfeit_by="black"),
    ]
    bots = by_name(compute_standings(records))
    assert bots["alpha"].forfeits == {"timeout": 2, "illegal_move": 1}
    assert bots["beta"].forfeits == {"crash": 1}
    assert (bots["alpha"].wins, bots["alpha"].losses) == (1, 3)
    expected = expected_ratings(
        [("alpha", "beta", "beta"), ("beta", "alpha", "alpha"), ("alpha", "beta", "beta"), ("beta", "alpha", "beta")]
    )
    assert bots["alpha"].mu == pytest.approx(expected["alpha"].mu, abs=1e-12)
    assert bots["beta"].mu == pytest.approx(expected["beta"].mu, abs=1e-12)


def test_tallies_crosstable_and_colours():
    records = [
        game(0, "alpha", "beta", "pink"),
        game(1, "beta", "alpha", None),
        game(2, "alpha", "gamma", "black"),
        game(3, "gamma", "beta", "pink"),
        game(4, "beta", "gamma", None),
        game(5, "alpha", "beta", "pink"),
        game(6, "gamma", "alpha", "black"),
    ]
    standings = compute_standings(records)
    bots = by_name(standings)
    assert standings.total_games == 7
    assert (bots["alpha"].wins, bots["alpha"].draws, bots["alpha"].losses) == (3, 1, 1)
    assert (bots["beta"].wins, bots["beta"].draws, bots["beta"].losses) == (0, 2, 3)
    assert (bots["gamma"].wins, bots["gamma"].draws, bots["gamma"].losses) == (2, 1, 1)
    assert bots["alpha"].score == 3.5
    assert bots["alpha"].score_pct == pytest.approx(70.0)
    assert sum(b.games for b in standings.bots) == 2 * standings.total_games

    assert standings.crosstable["alpha"]["beta"] == (2.5, 3)
    assert standings.crosstable["beta"]["alpha"] == (0.5, 3)
    assert standings.crosstable["gamma"]["alpha"] == (1.0, 2)
    assert standings.crosstable["beta"]["gamma"] == (0.5, 2)
    for row in BOTS:
        assert sum(score for score, _ in standings.crosstable[row].values()) == by_name(standings)[row].score

    assert list(standings.by_color) == ["pink", "black"]
    assert standings.by_color["pink"] == Tally(wins=3, draws=2, losses=2) and standings.by_color["pink"].games == 7
    assert standings.by_color["black"] == Tally(wins=2, draws=2, losses=3)


def test_moves_alternate_from_seat_zero():
    records = [
        game(0, "alpha", "beta", "pink", move_ms=(10.0, 100.0, 20.0, 200.0, 30.0)),
        game(1, "beta", "alpha", "black", move_ms=(300.0, 40.0)),
    ]
    bots = by_name(compute_standings(records))
    assert (bots["alpha"].moves, bots["alpha"].move_ms) == (4, 100.0)
    assert bots["alpha"].mean_move_ms == pytest.approx(25.0)
    assert (bots["beta"].moves, bots["beta"].move_ms) == (3, 600.0)
    assert bots["beta"].mean_move_ms == pytest.approx(200.0)


def test_bot_names_adds_bots_without_games():
    standings = compute_standings([game(0, "alpha", "beta", "pink")], bot_names=["alpha", "idle", "beta"])
    idle = by_name(standings)["idle"]
    assert (idle.mu, idle.sigma, idle.games, idle.moves) == (25.0, 25.0 / 3, 0, 0)
    assert idle.score_pct is None and idle.mean_move_ms is None
    assert standings.crosstable["idle"]["alpha"] == (0.0, 0)
    assert standings.crosstable["beta"]["idle"] == (0.0, 0)
    assert {b.name for b in standings.bots} == {"alpha", "beta", "idle"}


def test_no_games():
    standings = compute_standings([], bot_names=["b", "a"])
    assert standings.game is None and standings.total_games == 0 and standings.by_color == {}
    # Equal ratings and scores: ranked by name.
    assert [b.name for b in standings.bots] == ["a", "b"]


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(1e-9, 1e6))
def test_a_rating_made_without_trueskills_checks_is_trueskills_to_the_bit(mu: float, sigma: float):
    env = rating_env()
    made, theirs = _rating(env, mu, sigma), env.create_rating(mu, sigma)
    assert type(made) is type(theirs) and vars(made) == vars(theirs) and (made.mu, made.sigma) == (theirs.mu, theirs.sigma)


def test_a_rating_of_no_spread_is_refused_as_trueskill_refuses_it():
    with pytest.raises(ValueError, match="greater than 0"):
        _rating(rating_env(), 25.0, 0.0)


def test_global_trueskill_environment_is_left_alone():
    before = trueskill.global_env()
    compute_standings([game(0, "alpha", "beta", None)])
    assert trueskill.global_env() is before


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([game(0, "a", "b", "pink"), replace(game(1, "a", "b", "pink"), game="yoxii")], "mix several games"),
        ([game(0, "a", "a", "pink")], "plays itself"),
        ([game(0, "a", "b", "white")], "not a colour"),
        ([game(0, "a", "b", "pink", reason="timeout", forfeit_by="pink")], "forfeited"),
        ([game(0, "a", "b", None, reason="crash", forfeit_by="black")], "forfeited"),
        ([game(0, "a", "b", "pink", reason="crash", forfeit_by="red")], "not a colour"),
    ],
)
def test_inconsistent_records_are_rejected(records, message):
    with pytest.raises(ValueError, match=message):
        compute_standings(records)


results = st.lists(
    st.tuples(st.sampled_from(BOTS), st.sampled_from(BOTS), st.sampled_from(["pink", "black", None])).filter(
        lambda t: t[0] != t[1]
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(results)
def test_tallies_always_add_up(games):
    standings = compute_standings([game(i, a, b, w) for i, (a, b, w) in enumerate(games)])
    bots = standings.bots
    assert standings.total_games == len(games)
    assert sum(b.wins for b in bots) == sum(b.losses for b in bots) == sum(w is not None for *_, w in games)
    assert sum(b.draws for b in bots) == 2 * sum(w is None for *_, w in games)
    assert sum(b.score for b in bots) == len(games)
    for b in bots:
        assert b.games == b.wins + b.draws + b.losses
    for row, cols in standings.crosstable.items():
        for col, (score, played) in cols.items():
            other_score, other_played = standings.crosstable[col][row]
            assert played == other_played
            assert score + other_score == played
    for tally in standings.by_color.values():
        assert tally.games == len(games) == tally.wins + tally.draws + tally.losses
    ranking = [(b.rating, b.score) for b in bots]
    assert ranking == sorted(ranking, key=lambda t: (-t[0], -t[1]))


def test_a_long_run_of_games_rates_as_trueskill_does():
    # The two-player update is computed in closed form; a long chain of wins,
    # losses and draws, lopsided ratings included, must match the library.
    rng = random.Random(5)
    results, records = [], []
    for index in range(400):
        a, b = rng.sample(BOTS, 2)
        # alpha wins most of its games, so the ratings drift far apart
        winner = a if a == "alpha" or rng.random() < 0.3 else (None if rng.random() < 0.3 else b)
        results.append((a, b, winner))
        color = None if winner is None else ("pink" if winner == a else "black")
        records.append(game(index, a, b, color))
    expected = expected_ratings(results)
    for bot in compute_standings(records).bots:
        assert bot.mu == pytest.approx(expected[bot.name].mu, abs=1e-10)
        assert bot.sigma == pytest.approx(expected[bot.name].sigma, abs=1e-10)


def test_running_leader_follows_the_schedule_prefix():
    records = [game(0, "alpha", "beta", "pink"), game(1, "beta", "gamma", "black"), game(2, "gamma", "alpha", None),
               game(3, "beta", "alpha", "pink")]
    running = RunningLeader()
    assert running.leader() is None
    # Out of order: game 1 waits for game 0, so nothing is rated yet.
    running.add(records[1])
    assert running.leader() is None
    for count, record in enumerate([records[0], records[2], records[3]], start=2):
        running.add(record)
        best = compute_standings(records[:count]).bots[0]
        assert running.leader() == (best.name, pytest.approx(best.rating, abs=1e-12))


@pytest.mark.parametrize("ranking", ["points", "elo", "trueskill"])
@pytest.mark.parametrize("seed", range(6))
def test_the_running_leader_is_the_standings_leader_under_every_ranking(ranking, seed):
    rng = random.Random(seed)
    bots = [f"b{i}" for i in range(rng.randint(3, 6))]
    disqualified = (bots[-1],) if seed % 2 else ()
    records = []
    for index in range(rng.randint(8, 30)):
        pink, black = rng.sample(bots, 2)
        winner = rng.choice(["pink", "black", None])
        forfeit = {"forfeit_by": "black", "reason": "timeout"} if winner == "pink" and rng.random() < 0.2 else {}
        records.append(game(index, pink, black, winner, **forfeit))
    running = RunningLeader(Rules(ranking=ranking, disqualified=disqualified), refit_every_s=0.0)
    for count, added in enumerate(records, start=1):
        running.add(added)
        standings = compute_standings(records[:count], rules=Rules(ranking=ranking, disqualified=disqualified))
        best = standings.bots[0]
        if best.disqualified:
            continue  # only disqualified bots have played: none leads
        figure = {"points": best.score, "elo": best.elo, "trueskill": best.rating}[ranking]
        assert running.leader() == (best.name, pytest.approx(figure, abs=1e-9)), (ranking, count)


def test_the_points_leader_breaks_a_tie_on_the_head_to_head_score():
    # alpha and beta on 1 point each; beta beat alpha, so beta leads though alpha's name comes first.
    records = [game(0, "alpha", "gamma", "pink"), game(1, "beta", "alpha", "pink")]
    running = RunningLeader(Rules(ranking="points"))
    for added in records:
        running.add(added)
    assert running.leader() == ("beta", 1.0)
    assert running.describe() == "beta (1 point)"
    assert RunningLeader(Rules(ranking="trueskill")).leader() is None


def test_no_first_place_leads_before_a_game_is_in(tmp_path):
    # Round 1 paired, nothing played: the seeding's first bot is no leader
    # (in a course's run it was a team whose bot did not even start).
    run = start(tournament(tmp_path, 4, "format: swiss\nrounds: 2\n"))
    run.advance()
    running = RunningLeader(Rules(ranking="points"))
    assert running.leader(run.rounds) is None
    run.records.append(better_seed(next(s for s in run.advance() if "s3" in s.players)))
    running.add(run.records[0])
    assert running.leader(run.rounds) == ("s3", None)


def test_the_elo_leader_is_refitted_at_most_every_few_seconds():
    now = [0.0]
    running = RunningLeader(Rules(ranking="elo"), refit_every_s=5.0, clock=lambda: now[0])
    running.add(game(0, "alpha", "beta", "pink"))
    assert running.leader()[0] == "alpha"
    for index in range(1, 5):
        running.add(game(index, "alpha", "beta", "black"))
    assert running.leader()[0] == "alpha"  # the fit of 1 s ago still stands
    now[0] = 5.0
    assert running.leader()[0] == "beta"
    assert running.describe().startswith("beta (Elo +")
