"""``tournament.json`` as the arena reads it back: typed decoding (msgspec)
of a file anyone may forge, one line naming the file and the field for one
that is not the arena's, and the files earlier versions wrote still read
and written back byte for byte."""

from __future__ import annotations

import json
from dataclasses import replace
import shutil
from pathlib import Path

import pytest

from arena.formats.stages import Stage
from arena.game.clock import TimeControl
from arena.results.meta import META_FILE, MetaError, read_meta, write_meta

#: A ``tournament.json`` as 0.1.0 writes it, every key set: stages of each
#: format, pairings with byes, a suite with its moves, an SPRT, a bot with its
#: own clock, a remote one, a departed one, a cluster (tests/data/results-current).
CURRENT = Path(__file__).parent / "data" / "results-current"


def test_a_stored_tournament_json_of_the_current_format_reads_and_writes_back_byte_for_byte(tmp_path):
    meta = read_meta(CURRENT)
    assert meta is not None and meta.unsaid.suite is None and not meta.unsaid.seed
    assert [stage.format for stage in meta.competition.stages] == ["swiss", "adaptive", "knockout"]
    assert meta.competition.stages[1] == Stage("adaptive", top=6, confidence=0.9, within_elo=25.0, settle_top=3,
                                               max_games=400)
    assert meta.entry("b3").time_control == TimeControl(per_move_ms=250) and meta.entry("b4").remote
    assert meta.entry("gone").version == "v3" and meta.pairings[1].byes == ("b8",)
    assert [node.speed for node in meta.cluster.nodes] == [1.0, 0.8]
    assert meta.competition.rules.sprt.model == "logistic" and meta.competition.rules.disqualified == ("b9",)
    assert write_meta(tmp_path, meta)
    assert (tmp_path / META_FILE).read_bytes() == (CURRENT / META_FILE).read_bytes()
    shutil.copy(CURRENT / META_FILE, tmp_path / META_FILE)
    assert not write_meta(tmp_path, meta)  # read back the same: not written again


def forged(tmp_path: Path, **keys: object) -> Path:
    """The stored ``tournament.json`` with ``keys`` set as given, in ``tmp_path``."""
    data = json.loads((CURRENT / META_FILE).read_text())
    (tmp_path / META_FILE).write_text(json.dumps({**data, **keys}))
    return tmp_path


@pytest.mark.parametrize("keys, told", [
    # Where in the file, down to the item: the type decoded says where it failed.
    ({"stages": [{"format": "swiss", "rounds": 3}, {"format": "adaptive", "settle": {"confidence": "high"}}]},
     "stages[1].settle.confidence: Expected `float`, got `str`"),
    ({"pairings": [{"round": 1, "stage": 1, "pairs": [["b1", 2]]}]},
     "pairings[0].pairs[0][1]: Expected `str | null`, got `int`"),
    ({"bots": [{"name": "b1"}, {"name": "b2", "time_control": {"per_move_ms": 0}}]},
     "bots[1].time_control: the time per move must be positive"),
    ({"bots": [{"name": "b1", "earlier_versions": ["v" * 101]}]},
     "bots[0].earlier_versions[0]: Expected `str` of length <= 100"),
    ({"openings": {"count": 1, "digest": "x", "suite": [[0, ["Xc6 d6"] * 1001]]}},
     "openings.suite[0][1]: Expected `array` of length <= 1000"),
    ({"games": 2.0}, "games: Expected `int | null`, got `float`"),
    # What no type says, checked after it is decoded.
    ({"stages": [{"format": "swiss", "rounds": 0}]}, "stages[0]: not a stage (rounds: must be from 1 to 10000, got 0)"),
    ({"openings": {"count": 1, "digest": "x", "suite": [[9, []]]}}, "openings.suite: a start must be from 0 to 1"),
    ({"cluster": {"python": "3", "ray": "2", "nodes": [{"host": "h", "node_id": "n\u2028", "cpus": 1}]}},
     "cluster.nodes[0].node_id: must be printable text, got 'n\\u2028'"),
    # Not an object at all, or not JSON.
    ({}, None),
])
def test_a_forged_tournament_json_is_one_line_naming_the_file_and_the_field(tmp_path, keys, told):
    directory = forged(tmp_path, **keys)
    if told is None:  # (the stored file itself, as a control)
        assert read_meta(directory) is not None
        return
    with pytest.raises(MetaError) as refused:
        read_meta(directory)
    assert str(refused.value) == f"{directory / META_FILE}: {told}"


@pytest.mark.parametrize("text, told", [
    ("[1, 2]", "Expected `object`, got `array`"),
    ('{"name": "x", "game": "oxono"', "Input data was truncated"),
    ('{"name": "x"}', "Object missing required field `game`"),
    ('{"game": "oxono", "bots": [{"name": "a", "options": {"deep": ' + "[" * 100_000 + "]" * 100_000 + "}}]}",
     "maximum recursion depth exceeded"),
])
def test_a_tournament_json_that_is_not_an_object_of_the_arena_is_one_line(tmp_path, text, told):
    (tmp_path / META_FILE).write_text(text)
    with pytest.raises(MetaError) as refused:
        read_meta(tmp_path)
    assert str(refused.value).startswith(f"{tmp_path / META_FILE}: {told}") and "\n" not in str(refused.value)


def test_keys_of_a_later_version_are_ignored_and_null_lists_read_empty(tmp_path):
    meta = read_meta(forged(tmp_path, shiny_new_key={"x": 1}, bots=[{"name": "b1", "later": 2}, {"name": "b2"}],
                            seeding=None, pairings=None, departed=None, withdrawn=None, disqualified=None,
                            stages=None, format=None, description=None, ranking="a later rule", game_ids="later"))
    assert meta.names == ["b1", "b2"] and meta.pairings == meta.seeding == meta.departed == ()
    assert meta.competition.rules.ranking == "trueskill" and meta.unsaid.game_ids and meta.unsaid.format
    assert meta.description == ""


@pytest.mark.parametrize("seed", [-(1 << 63), -12, (1 << 63) - 1])
def test_every_seed_a_tournament_file_may_give_reads_back(tmp_path, seed):
    # The YAML reader takes the same range (tests/test_config.py): a run whose seed tournament.json could not
    # hold would not resume.
    meta = read_meta(CURRENT)
    assert meta is not None
    written = replace(meta, competition=replace(meta.competition, seed=seed))
    assert write_meta(tmp_path, written)
    assert read_meta(tmp_path).competition.seed == seed


def test_a_seed_past_64_bits_is_refused_in_one_line(tmp_path):
    with pytest.raises(MetaError, match=r"seed: Expected `int` <= 9223372036854775807"):
        read_meta(forged(tmp_path, seed=1 << 63))
