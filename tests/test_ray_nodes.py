"""What the actors' pre-flights on their nodes add up to (no Ray needed):
a bot that did not start on a node is said once for that node and kept
from its actors; one that started on no node stops the run with each
node's reason, or, under ``startup_failures: forfeit``, is said and let
go anywhere."""

import logging

import pytest

from arena.run.preflight import StartupFailed, StartupProblem
from arena.run.ray_nodes import NodeChecks

MISSING = StartupProblem("a", "cannot start ./a: no such program './a'")


def test_a_bot_that_did_not_start_on_one_node_is_said_once_for_it_and_kept_from_its_actors(caplog):
    checks = NodeChecks(["a", "b"])
    with caplog.at_level(logging.WARNING, logger="arena"):
        for _ in range(2):  # (two actors on one node)
            checks.warn("node w1 (4f1c0a9e)", checks.report("node w1 (4f1c0a9e)", [MISSING]))
        checks.report("node w2 (9be2d773)", [])
    assert [r.getMessage() for r in caplog.records] == [
        "bot 'a' did not start on node w1 (4f1c0a9e): cannot start ./a: no such program './a'; "
        "its games go to the other nodes"]
    assert checks.barred(frozenset({"a"})) == {"a"}
    assert not checks.settle([frozenset({"a"}), frozenset()], "stop")  # (it starts on w2)


def test_a_bot_that_started_on_no_node_stops_the_run_naming_each_node_and_each_reason_once():
    checks = NodeChecks(["a", "b"])
    checks.report("node w1 (4f1c0a9e)", [MISSING])
    checks.report("node w2 (9be2d773)", [MISSING])
    checks.report("node w3 (0a1b2c3d)", [StartupProblem("a", "no answer to 'hello' within 10 s")])
    with pytest.raises(StartupFailed) as failed:
        checks.settle([frozenset({"a"})] * 3, "stop")
    assert str(failed.value) == (
        "bot 'a' did not start on any node of the Ray cluster (every finished game is kept): on node w1 (4f1c0a9e) "
        "and node w2 (9be2d773): cannot start ./a: no such program './a'; on node w3 (0a1b2c3d): no answer to 'hello' "
        "within 10 s")


def test_under_forfeit_a_bot_that_started_on_no_node_is_said_and_let_go_anywhere(caplog):
    checks = NodeChecks(["a", "b"])
    checks.report("node w1 (4f1c0a9e)", [MISSING])
    with caplog.at_level(logging.WARNING, logger="arena"):
        assert checks.settle([frozenset({"a"})], "forfeit")
        assert not checks.settle([frozenset({"a"})], "forfeit")  # (said once)
    assert [r.getMessage() for r in caplog.records] == [
        "bot 'a' did not start on any node of the Ray cluster (on node w1 (4f1c0a9e): cannot start ./a: no such "
        "program './a'); its games are forfeited (startup_failures: forfeit)"]
    assert checks.barred(frozenset({"a"})) == frozenset()
