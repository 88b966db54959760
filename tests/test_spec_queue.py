"""The spec queue both executors share: specs read lazily, games put back
first, a stalled game tried twice, a game whose worker dies retried up to a
limit, each with the one-line error the run stops with."""

import time

import pytest

from arena.run.ray_executor import ACTOR_DIED

from arena.game.records import GameSpec
from arena.run.spec_queue import SpecQueue, StoppableSpecs, WorkerDied, WorkerStalled
from builders import record, spec


def ids(specs: list[GameSpec]) -> list[str]:
    return [s.game_id for s in specs]


def test_specs_are_read_only_as_workers_take_them():
    read = []

    def lazily():
        for n in range(5):
            read.append(n)
            yield spec(n)

    queue: SpecQueue[str] = SpecQueue(lazily(), 10.0, worker_kind="worker")
    assert ids(queue.take("w1")) == ["g0"] and read == [0]
    assert queue.fill(2) == 2 and read == [0, 1, 2]  # read ahead, taken first
    assert ids(queue.take("w2", 3)) == ["g1", "g2", "g3"]
    assert (queue.in_flight("w1"), queue.in_flight("w2"), queue.in_flight("w3")) == (1, 3, 0)
    assert queue.busy() and queue.unfinished()


def test_records_come_back_once_and_restart_the_clock():
    queue: SpecQueue[str] = SpecQueue([spec(n) for n in range(3)], 10.0, worker_kind="Ray actor")
    queue.take("w", 3)
    began = queue.since("w")
    time.sleep(0.01)
    assert queue.done("w", [record(0), record(1)]) == [record(0), record(1)]
    assert queue.in_flight("w") == 1 and queue.since("w") > began  # its last game began when the others ended
    assert queue.done("w", [record(2)]) == [record(2)]
    assert not queue.busy() and not queue.unfinished() and queue.next_deadline() is None


def test_a_stalled_game_goes_back_behind_the_games_queued_with_it_and_is_given_up_the_second_time():
    queue: SpecQueue[str] = SpecQueue([spec(n) for n in range(4)], 0.0, worker_kind="worker")
    queue.take("w1", 2)
    assert queue.stalled() == ["w1"]  # a deadline of 0 s has passed already
    queue.stall("w1")
    assert not queue.busy() and queue.waiting() == 2
    assert ids(queue.take("w2", 4)) == ["g1", "g0", "g2", "g3"]  # the one it did not start first
    queue.done("w2", [record(1), record(2), record(3)])
    queue.stall("w2")
    assert not queue.unfinished()
    with pytest.raises(WorkerStalled) as caught:
        queue.finish()
    assert str(caught.value) == (
        "no result for game g0: its worker went silent for more than 0 s, twice "
        "(a bot may have stopped it); every other game is kept"
    )


def test_a_game_whose_worker_dies_goes_back_first_until_its_last_attempt(caplog):
    queue: SpecQueue[str] = SpecQueue([spec(n) for n in range(4)], 10.0, worker_kind="Ray actor", max_attempts=3)
    queue.take("a1", 2)
    with caplog.at_level("WARNING", logger="arena"):
        queue.lose("a1", ACTOR_DIED)
    # (the line docs/cluster.md quotes)
    assert caplog.messages == ["a Ray actor was lost (its process or node died) in the middle of game g0: it is played again"]
    queue.lose("a1", "node lost")  # nothing in flight there any more: nothing lost
    assert ids(queue.take("a2", 3)) == ["g0", "g1", "g2"]  # only g0 was being played: one attempt
    queue.lose("a2", "node lost")
    assert ids(queue.take("a3")) == ["g0"]
    with pytest.raises(WorkerDied) as caught:
        queue.lose("a3", "killed")
    assert str(caught.value) == "game g0 lost its Ray actor 3 times (last: killed); every finished game is kept"


def test_with_one_attempt_a_dead_worker_stops_the_run_at_once():
    queue: SpecQueue[str] = SpecQueue([spec(0)], 10.0, worker_kind="worker")
    queue.take("w")
    with pytest.raises(WorkerDied) as caught:
        queue.lose("w", "arena-worker-1 died (exit code -9)")
    assert str(caught.value) == (
        "arena-worker-1 died (exit code -9) in the middle of a game; that game is lost, every finished game is kept"
    )


def paired(n: int) -> GameSpec:
    return GameSpec(index=n, game_id=f"g{n}", game="oxono", round=1, players=("a", "b"), opening=0, seed=n, pair=n // 2)


def test_stopped_specs_hand_out_nothing_more_not_even_what_was_read_ahead():
    decided = [False]
    queue: SpecQueue[str] = SpecQueue(StoppableSpecs([paired(n) for n in range(9)], lambda: decided[0]), 10.0,
                                      worker_kind="Ray actor", max_attempts=3)
    assert queue.stoppable and not queue.stopped()
    assert ids(queue.take_pair("w1")) == ["g0", "g1"]  # a game pair is the unit
    assert ids(queue.take_pair("w1")) == ["g2", "g3"]  # one more, queued behind it
    assert ids(queue.take_pair("w2")) == ["g4", "g5"]
    assert queue.fill(1) == 1  # g6 read ahead
    queue.lose("w2", "its node died")  # g4 and g5 put back, first in line
    decided[0] = True
    assert queue.stopped() and queue.waiting() == 0 and queue.take_pair("w3") == []
    # w1 drops what it had queued and not started: g1 played, g2 and g3 not.
    queue.done("w1", [record(0)])
    queue.cancel("w1", {"g2", "g3"})
    assert queue.in_flight("w1") == 1  # g1 is still in play
    queue.done("w1", [record(1)])
    assert not queue.unfinished()


def test_a_window_hands_out_no_pair_that_far_past_the_first_one_not_yet_complete():
    queue: SpecQueue[str] = SpecQueue(StoppableSpecs([paired(n) for n in range(20)], lambda: False), 10.0,
                                      worker_kind="Ray actor", max_attempts=3)
    queue.window = 3
    assert ids(queue.take_pair("slow")) == ["g0", "g1"]  # pair 0: the slow worker holds it
    assert [ids(queue.take_pair("fast")) for _ in range(3)] == [["g2", "g3"], ["g4", "g5"], []]  # pairs 1, 2; not 3
    queue.done("fast", [record(2), record(3), record(4), record(5)])
    assert queue.take_pair("fast") == []  # pair 0 still holds the window at 0 + 3
    queue.done("slow", [record(0), record(1)])  # complete: the window moves on
    assert ids(queue.take_pair("fast")) == ["g6", "g7"]
    queue.window = None
    assert [ids(queue.take_pair("fast")) for _ in range(3)] == [["g8", "g9"], ["g10", "g11"], ["g12", "g13"]]


def test_a_pair_cut_by_the_schedule_is_taken_alone():
    queue: SpecQueue[str] = SpecQueue(StoppableSpecs([paired(n) for n in range(3)], lambda: False), 10.0, worker_kind="w")
    assert ids(queue.take_pair("w")) == ["g0", "g1"]
    assert ids(queue.take_pair("w")) == ["g2"]
    assert queue.take_pair("w") == []
    assert not SpecQueue([spec(0)], 10.0, worker_kind="w").stoppable


def test_stopped_specs_still_hand_out_the_games_kept():
    """A lost game the test counted when it was decided (a hole) is played
    even once the test is decided; the specs are stopped only after it."""
    specs = StoppableSpecs([paired(n) for n in range(6)], lambda: True, keep={"g3"})
    assert not specs.stopped
    assert [s.game_id for s in specs] == ["g3"]
    assert specs.stopped


def test_a_worker_takes_only_the_games_it_can_play_and_the_others_keep_their_place():
    players = [("a", "b"), ("a", "c"), ("b", "c"), ("a", "b"), ("b", "c")]
    queue: SpecQueue[str] = SpecQueue((spec(n, pair) for n, pair in enumerate(players)), 10.0, worker_kind="Ray actor")

    def without_a(game: GameSpec) -> bool:  # (bot a does not start on this worker's node)
        return "a" not in game.players

    assert ids(queue.take("w1", 2, without_a)) == ["g2", "g4"]
    assert queue.waiting() == 3 and ids(queue.take("w1", 1, without_a)) == []
    assert ids(queue.take("w2", 3)) == ["g0", "g1", "g3"]  # in schedule order, for a worker that plays them all
    assert ids(queue.take_pair("w2", without_a)) == [] and not queue.waiting()
