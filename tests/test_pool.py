"""The bots a worker keeps started (:class:`arena.run.pool.BotPool`): reused
from game to game, at most ``MAX_LIVE_BOTS`` of them, the least recently used
stopped to make room, never the other seat of the game about to start."""

from __future__ import annotations

import pytest

import arena.run.pool as pool_module
from arena.run.pool import BotPool
from builders import ROOT, spec, tournament

NAMES = ["a", "b", "c", "d", "e"]

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


def live(pool: BotPool) -> dict[str, int]:
    """The bots the pool holds with a running process, by name: their pids."""
    return {name: player.process.pid for name, player in pool.players.items()
            if player.process is not None and player.process.alive}


def test_a_pool_keeps_at_most_its_bound_stopping_the_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_LIVE_BOTS", 3)
    config = tournament(tmp_path, NAMES, cwd=ROOT, name="p")
    pool = BotPool(config, None, "t")
    try:
        pool.play(spec(0, ("a", "b")))
        first = live(pool)
        pool.play(spec(1, ("b", "a")))
        assert live(pool) == first  # the same two processes, reused
        pool.play(spec(2, ("a", "c")))  # three bots: the bound, nothing stopped
        assert set(live(pool)) == {"a", "b", "c"}
        pool.play(spec(3, ("d", "c")))  # d needs room: b, used longest ago, stops; c (the other seat) stays
        assert set(live(pool)) == {"a", "c", "d"}
        assert live(pool)["a"] == first["a"]
        # b again, a new process: a then d (seat 0 of the last game, so used before c) made room.
        pool.play(spec(4, ("e", "b")))
        now = live(pool)
        assert set(now) == {"c", "e", "b"} and now["b"] != first["b"]
        for game in range(5, 15):  # never more than the bound, whatever the order
            pool.play(spec(game, (NAMES[game % 5], NAMES[(game * 2 + 1) % 5] if game % 5 != (game * 2 + 1) % 5 else "a")))
            assert len(live(pool)) <= 3
    finally:
        pool.close()
    assert live(pool) == {}


def test_short_of_memory_a_pool_keeps_only_the_bots_of_the_game(tmp_path, monkeypatch):
    config = tournament(tmp_path, NAMES, cwd=ROOT, name="p")
    pool = BotPool(config, None, "t")
    try:
        pool.play(spec(0, ("a", "b")))
        pool.play(spec(1, ("c", "d")))
        assert set(live(pool)) == {"a", "b", "c", "d"}  # memory to spare: all kept
        monkeypatch.setattr(pool_module, "memory_is_low", lambda: True)
        pool.play(spec(2, ("e", "a")))
        assert set(live(pool)) == {"e", "a"}
    finally:
        pool.close()


def test_low_memory_is_read_from_the_machine(monkeypatch):
    monkeypatch.setattr(pool_module, "LOW_MEMORY", 1.01)  # less than all of it is always available
    assert pool_module.memory_is_low()
    monkeypatch.setattr(pool_module, "LOW_MEMORY", 0.0)
    assert not pool_module.memory_is_low()
