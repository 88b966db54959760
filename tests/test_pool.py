"""The bots a worker keeps started (:class:`arena.run.pool.BotPool`): reused
from game to game, at most ``MAX_LIVE_BOTS`` of them, the least recently used
stopped to make room, never the other seat of the game about to start."""

from __future__ import annotations

import pytest

import arena.run.pool as pool_module
from arena.bot.version import fingerprint
from arena.run.pool import BotPool
from builders import RANDOM_SCRIPT, ROOT, bot_copies, spec, tournament

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


def test_a_bot_whose_files_changed_since_the_run_recorded_its_version_is_not_started(tmp_path):
    """A worker's start of a bot (its first, or a restart) checks its files
    against the version the game's record names before the launch: the game
    of files the run did not record is a startup_failure forfeit, naming
    both versions, and no process of them runs."""
    config = tournament(tmp_path, ["a", "b"], cmds=bot_copies(tmp_path, ["a", "b"]), cwd=tmp_path, name="p")
    recorded = {bot.name: fingerprint(bot).version for bot in config.bots}
    versions = (recorded["a"], recorded["b"])
    pool = BotPool(config, None, "t")
    try:
        assert pool.play(spec(0, ("a", "b"), versions=versions)).forfeit_by is None
        with open(tmp_path / "a.py", "a") as script:
            script.write("# edited\n")
        now = fingerprint(config.bot("a")).version
        assert pool.play(spec(1, ("a", "b"), versions=versions)).forfeit_by is None  # a's process started before
        pool.players["a"].discard_process()  # a restart, as after a crash or to make room
        played = pool.play(spec(2, ("b", "a"), versions=(recorded["b"], recorded["a"])))
        assert (played.reason, played.players[played.forfeit_by]) == ("startup_failure", "a")
        assert played.detail == (f"its files changed since the run started (version {recorded['a']} recorded, "
                                 f"now {now}): the next run plays this game as the new version")
        assert pool.players["a"].process is None  # nothing launched
        assert pool.play(spec(3, ("a", "b"), versions=(now, recorded["b"]))).forfeit_by is None  # as the edited files
    finally:
        pool.close()


def test_a_bot_whose_files_change_while_it_starts_is_stopped_before_its_game(tmp_path):
    """The files are checked again once the bot answered ``hello``: those
    changed after the check before the launch, by the time its program read
    them, are caught too."""
    script = RANDOM_SCRIPT.read_text().replace(
        'if __name__ == "__main__":\n', 'if __name__ == "__main__":\n    open(__file__, "a").write("# edited\\n")\n')
    cmds = {**bot_copies(tmp_path, ["a"], script), **bot_copies(tmp_path, ["b"])}  # a edits itself as it starts
    config = tournament(tmp_path, ["a", "b"], cmds=cmds, cwd=tmp_path, name="p")
    versions = tuple(fingerprint(bot).version for bot in config.bots)
    pool = BotPool(config, None, "t")
    try:
        played = pool.play(spec(0, ("a", "b"), versions=versions))
        assert (played.reason, played.forfeit_by) == ("startup_failure", "pink")
        assert played.detail.startswith(f"its files changed since the run started (version {versions[0]} recorded, now ")
        assert pool.players["a"].process is None
    finally:
        pool.close()


def test_a_pool_that_checks_no_versions_starts_a_bot_whatever_its_files(tmp_path):
    """A Ray actor's pool (a node's copy of a bot is its own build) and a
    spec without versions (arena check) start the bot as it is."""
    config = tournament(tmp_path, ["a", "b"], cmds=bot_copies(tmp_path, ["a", "b"]), cwd=tmp_path, name="p")
    stale = ("00000000", "00000000")
    for pool, game in ((BotPool(config, None, "t", check_versions=False), spec(0, ("a", "b"), versions=stale)),
                       (BotPool(config, None, "t"), spec(0, ("a", "b")))):
        try:
            assert pool.play(game).forfeit_by is None
        finally:
            pool.close()
