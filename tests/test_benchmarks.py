"""Every benchmark still runs: each script of benchmarks/ at its ``--quick``
size, as a subprocess, exits 0 and prints its table.  Parametrised over the
folder, so a benchmark added there is covered without a word here.  The
figures themselves mean nothing at this size; measuring is the scripts' job."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from builders import ROOT

BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
#: The slowest --quick run takes some 15 s on two busy cores.
TIMEOUT_S = 120


def test_the_folder_holds_benchmarks():
    assert len(BENCHMARKS) >= 10


def test_the_readme_says_how_to_run_each_benchmark():
    listed = set(re.findall(r"^python benchmarks/(\w+\.py) ", (ROOT / "README.md").read_text(), re.M))
    assert {path.name for path in BENCHMARKS} == listed


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_a_benchmark_runs_at_its_quick_size(script, tmp_path):
    done = subprocess.run([sys.executable, str(script), "--quick"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT_S, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    # Its table: at least one line of figures on stdout, and no traceback anywhere.
    figures = [line for line in done.stdout.splitlines() if re.search(r"\d", line)]
    assert figures, f"{script.name} --quick printed no figures:\n{done.stdout}"
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
