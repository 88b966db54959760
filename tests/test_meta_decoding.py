"""``tournament.json`` as the arena reads it back: typed decoding (msgspec)
of a file anyone may forge, one line naming the file and the field for one
that is not the arena's, and the files earlier versions wrote still read
and written back byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

from arena.formats.stages import Stage
from arena.game.clock import TimeControl
from arena.results.meta import META_FILE, read_meta, write_meta

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
