"""The league as a model: sequences of events, for every format, checked
after every step (issue 26; the model is ``tests/league_model.py``).

Short for CI: a format's sequence is its first run and the two events of
:data:`SEQUENCES`, which between them hold every kind of event the model
knows (the test below keeps it so); the kills, their moments and the bots
an event picks are drawn from a fixed seed a format, so that a run replays
the same sequence (the moments the runs are killed vary with the machine's
speed).  ``LEAGUE_MODEL_SEED`` draws other kills and picks.  Random events,
as many as asked, are ``scripts/league_soak.py``'s: the long soak.  A
failure prints the sequence and what went wrong; each bug found this way
has a plain test of its own in ``tests/test_league_disruptions.py``.
"""

from __future__ import annotations

import os

import pytest

from league_model import EVENTS, FORMATS, run_sequence

SEED = int(os.environ.get("LEAGUE_MODEL_SEED", "26"))

#: The events of each format's sequence in CI, after its first run: each
#: where it once found a bug or where the format makes it matter (a Swiss's
#: rounds, the gauntlet's challenger kept first, a knockout's finalist away
#: and back, an SPRT match given more games).
SEQUENCES: dict[str, tuple[str, ...]] = {
    "round-robin": ("late", "garble"),
    "gauntlet": ("change", "shuffle"),
    "reference": ("break", "run"),
    "swiss": ("rounds", "delete"),
    "knockout": ("remove", "back"),
    "stages": ("change", "tear"),
    "sprt": ("more", "delete"),
    "adaptive": ("remove", "index"),
}


def test_the_sequences_hold_every_format_and_every_kind_of_event():
    assert set(SEQUENCES) == set(FORMATS)
    assert {event for events in SEQUENCES.values() for event in events} == set(EVENTS)


# About 10 s a sequence on 2 free cores; a loaded machine may take several times that.
@pytest.mark.timeout(300)
@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_league_survives_any_sequence_of_events(tmp_path, fmt):
    log = run_sequence(SEED + FORMATS.index(fmt), fmt, tmp_path / "league", SEQUENCES[fmt], stop_first=True)
    assert not log.violations, log.describe()
