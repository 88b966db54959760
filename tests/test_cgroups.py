"""The cgroups of bots: made, swept and removed however other arena processes race."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from arena.bot import cgroups
from arena.bot.limits import Limits, rlimits


def test_a_stale_cgroup_removed_by_another_arena_meanwhile_is_no_error(tmp_path, monkeypatch):
    # Arena processes starting at once sweep the same stale cgroups: the one
    # that walks a directory the other just removed must carry on, not fail
    # its bot's start.
    stale = tmp_path / "totem-arena-999999"
    stale.mkdir()

    def removed_meanwhile(self, pattern):
        raise FileNotFoundError(2, "No such file or directory", str(self))

    monkeypatch.setattr(Path, "rglob", removed_meanwhile)
    cgroups._kill_tree_and_remove(stale)  # raises nothing
    monkeypatch.undo()
    cgroups._kill_tree_and_remove(stale)
    assert not stale.exists()


def test_rlimits_leave_to_a_cgroup_what_it_counts():
    # On cgroup v1 a bot's cgroup may count its memory but not its processes.
    memory_only = cgroups.BotCgroup([], 1, counts_memory=True, counts_processes=False)
    kinds = {which for which, _, _ in rlimits(Limits(memory_mb=100, processes=10), memory_only)}
    assert resource.RLIMIT_DATA not in kinds and resource.RLIMIT_FSIZE in kinds
    assert (resource.RLIMIT_NPROC in kinds) == (os.geteuid() != 0)
    both = cgroups.BotCgroup([], 2, counts_memory=True, counts_processes=True)
    assert {which for which, _, _ in rlimits(Limits(memory_mb=100, processes=10), both)} == {resource.RLIMIT_FSIZE}
