"""The schedule: counts, fairness of seats and openings, ids, stable seeds."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections import Counter

import pytest

import engine
from arena.game.records import GameRecord, GameSpec, parse_game_id
from arena.run.config import TournamentConfig, load_config, parse_config
from arena.formats.game_pairs import game_seed
from arena.formats.schedule import make_schedule, pairings
from builders import ROOT, tournament


def config(
    game: str = "oxono", bots: int = 4, rounds: int = 1, format: str = "round-robin", seed: int = 0
) -> TournamentConfig:
    """A tournament of bots named bot0, bot1, ... in that order."""
    return tournament(ROOT, [f"bot{i}" for i in range(bots)], game=game, rounds=rounds, format=format, seed=seed)


def expected_seed(tournament_seed: int, game_id: str) -> int:
    """The documented formula, written out independently of the module."""
    digest = hashlib.sha256(f"{tournament_seed}:{game_id}".encode("utf-8")).digest()
    return (digest[0] << 24 | digest[1] << 16 | digest[2] << 8 | digest[3]) % 2**31


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
@pytest.mark.parametrize("bots", [2, 3, 5])
@pytest.mark.parametrize("rounds", [1, 3])
def test_round_robin_count(game: str, bots: int, rounds: int) -> None:
    openings = engine.get_game(game).openings
    schedule = make_schedule(config(game, bots, rounds).competition)
    assert len(schedule) == rounds * bots * (bots - 1) // 2 * openings * 2


@pytest.mark.parametrize("game", ["oxono", "yoxii"])
@pytest.mark.parametrize("bots", [2, 4])
def test_gauntlet_count_and_pairs(game: str, bots: int) -> None:
    openings = engine.get_game(game).openings
    schedule = make_schedule(config(game, bots, rounds=2, format="gauntlet").competition)
    assert len(schedule) == 2 * (bots - 1) * openings * 2
    # The first bot plays every game; the others never meet each other.
    assert all("bot0" in spec.players for spec in schedule)
    assert Counter(spec.players[0] if spec.players[1] == "bot0" else spec.players[1] for spec in schedule) == {
        f"bot{j}": 2 * openings * 2 for j in range(1, bots)
    }


def test_openings_come_from_the_engine() -> None:
    assert engine.get_game("oxono").openings == 2
    assert engine.get_game("yoxii").openings == 1
    assert {spec.opening for spec in make_schedule(config("oxono").competition)} == {0, 1}
    assert {spec.opening for spec in make_schedule(config("yoxii").competition)} == {0}


@pytest.mark.parametrize("format", ["round-robin", "gauntlet"])
@pytest.mark.parametrize("game", ["oxono", "yoxii"])
def test_every_ordered_pair_equally_often_on_each_seat_and_opening(format: str, game: str) -> None:
    rounds = 3
    schedule = make_schedule(config(game, 4, rounds, format).competition)
    pairs = [(0, 1), (0, 2), (0, 3)] + ([(1, 2), (1, 3), (2, 3)] if format == "round-robin" else [])
    seen = Counter((spec.round, spec.players, spec.opening) for spec in schedule)
    openings = engine.get_game(game).openings
    expected = {
        (r, (f"bot{a}", f"bot{b}"), o): 1
        for r in range(1, rounds + 1)
        for i, j in pairs
        for a, b in ((i, j), (j, i))
        for o in range(openings)
    }
    assert seen == expected


def test_pairings_name_each_pair_in_name_order_in_an_order_of_their_names_alone() -> None:
    names = ["delta", "alpha", "charlie", "bravo"]
    pairs = pairings(names, "round-robin")
    assert sorted(pairs) == [("alpha", "bravo"), ("alpha", "charlie"), ("alpha", "delta"),
                             ("bravo", "charlie"), ("bravo", "delta"), ("charlie", "delta")]
    # The order is that of the SHA-256 of "a~b", whatever the file's order.
    assert pairs == sorted(pairs, key=lambda p: hashlib.sha256(f"{p[0]}~{p[1]}".encode()).digest())
    assert pairings(list(reversed(names)), "round-robin") == pairs
    assert sorted(pairings(names, "gauntlet")) == [("alpha", "delta"), ("bravo", "delta"), ("charlie", "delta")]
    assert sorted(pairings(names, "reference", reference=["alpha", "bravo"])) == [
        ("alpha", "charlie"), ("alpha", "delta"), ("bravo", "charlie"), ("bravo", "delta")]
    with pytest.raises(ValueError):
        pairings(names, "swiss")


def test_order_and_ids_of_the_first_games() -> None:
    schedule = make_schedule(config("oxono", 3, rounds=2).competition)
    first = pairings(["bot0", "bot1", "bot2"], "round-robin")[0]
    a, b = first
    head = [(s.game_id, s.round, s.players, s.opening) for s in schedule[:4]]
    assert head == [
        (f"r1-{a}~{b}-g1", 1, (a, b), 0),
        (f"r1-{a}~{b}-g2", 1, (b, a), 0),
        (f"r1-{a}~{b}-g3", 1, (a, b), 1),
        (f"r1-{a}~{b}-g4", 1, (b, a), 1),
    ]
    # The protocol's example id: round 1, bot1 against bot2, second game.
    spec = next(s for s in schedule if s.game_id == "r1-bot1~bot2-g2")
    assert (spec.players, spec.opening) == (("bot2", "bot1"), 0)
    assert schedule[12].game_id == f"r2-{a}~{b}-g1"
    assert [s.round for s in schedule] == sorted(s.round for s in schedule)


def test_ids_are_unique_and_well_formed_and_indices_count_from_zero() -> None:
    schedule = make_schedule(config("oxono", 5, rounds=3).competition)
    assert [spec.index for spec in schedule] == list(range(len(schedule)))
    assert [spec.pair for spec in schedule] == [i // 2 for i in range(len(schedule))]
    assert len({spec.game_id for spec in schedule}) == len(schedule)
    for spec in schedule:
        round_, a, b, k = re.fullmatch(r"r(\d+)-(bot\d)~(bot\d)-g(\d+)", spec.game_id).groups()
        assert int(round_) == spec.round and a < b and {a, b} == set(spec.players)
        assert 1 <= int(k) <= 4 and spec.players[0] == (a if int(k) % 2 else b)
        assert spec.game == "oxono"


def test_a_game_is_the_same_whatever_the_bots_places_in_the_file_and_whoever_joins() -> None:
    text = "name: t\ngame: oxono\ntime_control: 5+0.1\nrounds: 2\nseed: 5\nbots:\n"
    entries = [f"  - {{name: {n}, cmd: x}}\n" for n in ("ann", "bob", "cy", "dee")]
    before = make_schedule(parse_config(text + "".join(entries), base_dir=ROOT).competition)
    shuffled = make_schedule(parse_config(text + "".join(entries[::-1]), base_dir=ROOT).competition)
    joined = make_schedule(parse_config(text + "".join(entries[:2] + ["  - {name: eve, cmd: x}\n"] + entries[2:]), base_dir=ROOT).competition)
    games = lambda specs: {(s.game_id, s.seed, s.players, s.opening, s.round) for s in specs}
    assert shuffled == before  # the same games in the same order: the same fold, the same table
    assert games(before) < games(joined)
    assert {s.game_id for s in joined} - {s.game_id for s in before} == {s.game_id for s in joined if "eve" in s.players}


def test_results_written_before_names_keep_their_ids_by_position() -> None:
    from dataclasses import replace

    schedule = make_schedule(replace(config("oxono", 3).competition, game_ids="positions"))
    assert [(s.game_id, s.players) for s in schedule[:2]] == [("r1-p1-g1", ("bot0", "bot1")), ("r1-p1-g2", ("bot1", "bot0"))]
    assert next(s for s in schedule if s.game_id == "r1-p3-g2").players == ("bot2", "bot1")


def test_deterministic() -> None:
    cfg = config("oxono", 4, rounds=2, seed=42)
    assert make_schedule(cfg.competition) == make_schedule(cfg.competition)
    assert make_schedule(cfg.competition) == make_schedule(config("oxono", 4, rounds=2, seed=42).competition)


def test_seeds_follow_the_documented_formula() -> None:
    for seed in (0, 1, -5, 2**40):
        for spec in make_schedule(config("yoxii", 3, rounds=2, seed=seed).competition):
            assert spec.seed == expected_seed(seed, spec.game_id)
            assert 0 <= spec.seed < 2**31


def test_seeds_differ_between_games_and_tournaments() -> None:
    one = make_schedule(config("oxono", 4, rounds=2, seed=1).competition)
    two = make_schedule(config("oxono", 4, rounds=2, seed=2).competition)
    assert len({spec.seed for spec in one}) == len(one)
    assert [s.game_id for s in one] == [s.game_id for s in two]
    assert all(a.seed != b.seed for a, b in zip(one, two))


def test_seeds_are_the_same_in_another_process() -> None:
    # hash() of a str is salted per process; the schedule must not depend on it.
    code = "from arena.formats.game_pairs import game_seed; print(game_seed(7, 'r2-p3-g4'))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
        cwd=ROOT,
    )
    assert int(out.stdout) == game_seed(7, "r2-p3-g4") == expected_seed(7, "r2-p3-g4")


def test_game_spec_is_frozen() -> None:
    spec = make_schedule(config().competition)[0]
    assert isinstance(spec, GameSpec)
    with pytest.raises(AttributeError):
        spec.seed = 3  # type: ignore[misc]


@pytest.mark.parametrize(("game", "games"), [("oxono", 96), ("yoxii", 36)])
def test_demo_schedules(game: str, games: int) -> None:
    schedule = make_schedule(load_config(ROOT / "tournaments" / f"{game}-demo.yaml").competition)
    assert len(schedule) == games
    assert Counter(name for spec in schedule for name in spec.players) == {
        "random": games * 2 // 3,
        "greedy": games * 2 // 3,
        "greedy-2": games * 2 // 3,
    }


@pytest.mark.parametrize("format", ["round-robin", "reference"])
def test_every_game_is_found_from_its_id_alone_and_ordered_as_the_schedule(format: str) -> None:
    from dataclasses import replace as replaced

    from arena.formats.schedule import ScheduledGames

    extra = "reference: [b, d]\n" if format == "reference" else ""
    config = tournament(ROOT, ["a-1", "b", "c", "d", "e"], extra, format=format, rounds=3)
    schedule = make_schedule(config.competition)
    games = ScheduledGames(config.competition)
    colors = engine.get_game(config.competition.game).colors
    records = [GameRecord.for_spec(spec, colors, {"per_move_ms": 50}) for spec in schedule]
    for spec, record in zip(schedule, records):  # each the game the schedule names, from its id alone
        assert games.match(record, 3) == (True, ScheduledGames.order(spec.game_id))
    assert sorted(schedule, key=lambda s: ScheduledGames.order(s.game_id)) == schedule
    for spec, record in list(zip(schedule, records))[::7]:  # a record of another seed, opening or seats is not
        for forged in (replaced(record, seed=record.seed + 1), replaced(record, opening_moves=["a1"]),
                       replaced(record, opening=record.opening + 1),
                       replaced(record, players=dict(zip(colors, reversed(spec.players))))):
            assert games.match(forged, 3) == (False, ScheduledGames.order(spec.game_id))
        assert games.match(record, spec.round - 1) is None
    assert games.match(records[-1], 2) is None  # (round 3 is past the rounds asked)
    for unknown in ("r1-a-1~z-g1", "r1-a-1~b-g99", "r0-a-1~b-g1", "r1-b~a-1-g1", "r1-p1-g1", "junk"):
        assert games.match(replaced(records[0], game_id=unknown), 3) is None, unknown
    if format == "reference":  # two reference bots never meet
        assert games.match(replaced(records[0], game_id="r1-b~d-g1"), 3) is None


@pytest.mark.parametrize("text, parsed", [
    ("r1-a~b-g1", (1, "a", "b", 1)), ("r12-bot-1~bot-2-g34", (12, "bot-1", "bot-2", 34)),
    ("r1-a-g~b-g3", (1, "a-g", "b", 3)), ("r1-a~b-g2-g3", (1, "a", "b-g2", 3)), ("r0-a~b-g0", (0, "a", "b", 0)),
    ("r1-a\n~b-g1", (1, "a\n", "b", 1)),
    ("r01-a~b-g1", None), ("r1-a~b-g01", None), ("r1-b~a-g1", None), ("r1-a~a-g1", None), ("r1-a~b~c-g1", None),
    ("r1-~b-g1", None), ("r1-a~-g1", None), ("r1-a~b-g", None), ("r1-a~b-g1-gx", None), ("r\u0663-a~b-g1", None),
    ("r1-a~b-g1\n", None), ("p1-a~b-g1", None), ("r1-p1-g1", None),
])
def test_a_game_id_by_names_is_read_back_and_no_other_text(text: str, parsed: tuple[int, str, str, int] | None) -> None:
    assert parse_game_id(text) == parsed
