"""The league as a model: random sequences of events, for every format,
checked after every step (issue 26; the model is ``tests/league_model.py``).

Bounded for CI: one sequence of :data:`STEPS` events a format, from fixed
seeds, so that a run replays the same events (the moments the runs are
killed vary with the machine's speed).  ``LEAGUE_MODEL_SEED`` draws other
events; ``scripts/league_soak.py`` runs sequences for as long as asked.  A
failure prints the sequence and what went wrong; each bug found this way
has a plain test of its own in ``tests/test_league_disruptions.py``.
"""

from __future__ import annotations

import os

import pytest

from league_model import FORMATS, run_sequence

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SEED = int(os.environ.get("LEAGUE_MODEL_SEED", "26"))
STEPS = 5


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_league_survives_any_sequence_of_events(tmp_path, fmt):
    log = run_sequence(SEED + FORMATS.index(fmt), fmt, tmp_path / "league", STEPS)
    assert not log.violations, log.describe()
