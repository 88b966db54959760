"""Game records played in-process with the engine, for tests and benchmarks of
what reads records (report, show): real games, with every kind of ending,
made in milliseconds and without starting a bot."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import engine
from arena.game.records import GameRecord, GameSpec, MoveRecord


def played_games(
    game_name: str, bots: Sequence[str], count: int, *, seed: int = 0, forfeit_every: int = 0, opening_plies: int = 0
) -> list[GameRecord]:
    """``count`` games of random moves between the pairs of ``bots`` in turn, colours
    alternating.  Every ``forfeit_every``-th game (when not 0) ends in a timeout
    of the player to move after a few moves.  Some moves carry an ``info``.
    Games of odd index start after an opening of ``opening_plies`` random moves,
    as from an opening suite."""
    game = engine.get_game(game_name)
    rng = random.Random(seed)
    pairs = list(itertools.permutations(bots, 2))
    records = []
    for index in range(count):
        players = pairs[index % len(pairs)]
        record = GameRecord(
            game_id=f"r{index // len(pairs) + 1}-g{index}",
            game=game.name,
            players=dict(zip(game.colors, players)),
            seed=rng.randrange(2**31),
            # Two bots play in game pairs: both colours on one opening, back to back.
            opening=(index // 2 if len(bots) == 2 else index) % game.openings,
            pair=index // 2 if len(bots) == 2 else None,
            time_control={"initial_ms": 5000, "increment_ms": 100},
            winner=None,
            reason="",
            index=index,
            round=index // len(pairs) + 1,
        )
        state = game.new_state(seed=record.seed, opening=record.opening)
        for _ in range(opening_plies if index % 2 else 0):
            record.opening_moves.append(rng.choice(game.legal_moves(state)))
            state = game.apply(state, record.opening_moves[-1])
        stop = rng.randrange(2, 8) if forfeit_every and index % forfeit_every == forfeit_every - 1 else None
        while game.outcome(state) is None and len(record.moves) != stop:
            move = rng.choice(game.legal_moves(state))
            info = {"score": round(rng.uniform(-1, 1), 2), "pv": [move]} if rng.random() < 0.3 else None
            record.moves.append(MoveRecord(move, round(rng.lognormvariate(0, 1.5), 3), info))
            state = game.apply(state, move)
        if stop is not None and game.outcome(state) is None:
            loser = game.colors[game.to_move(state)]
            record.forfeit_by = loser
            record.winner = next(c for c in game.colors if c != loser)
            record.reason = "timeout"
            record.detail = "answered after 5120 ms, over its 5050 ms"
        else:
            outcome = game.outcome(state)
            record.winner = None if outcome.winner is None else game.colors[outcome.winner]
            record.reason = outcome.reason
            if outcome.scores is not None:
                record.scores = dict(zip(game.colors, outcome.scores))
        records.append(record)
    return records


def played_tournament(
    yaml_text: str, winners: Mapping[frozenset[str], Sequence[str | None]] | None = None, *, seed: int = 0,
) -> tuple[list[GameRecord], dict[str, Any]]:
    """A Swiss, knockout or staged tournament played out in-process, as
    ``arena run`` pairs it round by round: its records and its
    ``tournament.json``.  Each game is a real game of random moves, its bots
    seated so that the wanted one wins: ``winners[{a, b}]`` lists, game by
    game, the winner of the games of ``a`` and ``b`` in a round (None: a
    draw, only when the random games had one); a pairing not listed is won
    every game by the bot earlier in the file."""
    from arena.run.config import parse_config
    from arena.run.results_dir import tournament_meta
    from builders import start

    config = parse_config(yaml_text, base_dir=Path.cwd())
    game = engine.get_game(config.competition.game)
    order = [bot.name for bot in config.bots]
    pool = played_games(game.name, ["x", "y"], 40, seed=seed)
    by_winner: dict[str | None, list[GameRecord]] = {}
    for record in pool:
        by_winner.setdefault(record.winner, []).append(record)
    played: dict[tuple[int, frozenset[str]], int] = {}
    count = itertools.count()

    def decide(spec: GameSpec) -> GameRecord:
        index = next(count)
        pair = frozenset(spec.players)
        k = played.get((spec.round, pair), 0)
        played[(spec.round, pair)] = k + 1
        wanted = (winners or {}).get(pair)
        winner = wanted[k] if wanted is not None else min(spec.players, key=order.index)
        color = None if winner is None else game.colors[spec.players.index(winner)]
        # A game played from the spec's start position, so the record is the game the schedule holds.
        sources = [r for r in by_winner[color] if r.opening == spec.opening] or by_winner[color]
        source = sources[index % len(sources)]
        return dataclasses.replace(
            source, game_id=spec.game_id, players=dict(zip(game.colors, spec.players)), round=spec.round,
            index=index, pair=spec.pair, seed=spec.seed,
        )

    run = start(config).play(decide)
    return run.records, tournament_meta(config, seeding=run.seeding, pairings=run.pairings).to_json()
