"""In CI a test that skips fails: conftest.py says so, for every skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SKIPPING = """
import pytest
import needs

def test_needs_a_program():
    needs.program("no-such-program-totem", "apt-get install totem-frobnicator")

def test_skips_itself():
    pytest.skip("not today")

def test_runs():
    assert True
"""

SKIPPED_MODULE = """
import pytest
pytest.importorskip("no_such_module_totem")

def test_never_collected():
    pass
"""


def run_pytest(tmp_path: Path, source: str, ci: str) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_sample.py"
    test_file.write_text(source)
    env = {**os.environ, "CI": ci, "PYTHONPATH": str(TESTS)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "conftest", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), "-c", os.devnull, str(test_file)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_every_skip_is_a_failure_naming_its_reason(tmp_path, ci):
    result = run_pytest(tmp_path, SKIPPING, ci)
    assert result.returncode == 1, result.stdout
    assert "2 failed, 1 passed" in result.stdout
    assert "skipped in CI, where every test must run: the program 'no-such-program-totem' is missing: " \
        "apt-get install totem-frobnicator" in result.stdout
    assert "skipped in CI, where every test must run: not today" in result.stdout


def test_in_ci_a_module_skipped_at_import_is_a_failure(tmp_path):
    result = run_pytest(tmp_path, SKIPPED_MODULE, "true")
    assert result.returncode != 0 and "skipped in CI" in result.stdout, result.stdout


@pytest.mark.parametrize("ci", ["", "false"])
def test_outside_ci_a_skip_says_what_to_install(tmp_path, ci):
    result = run_pytest(tmp_path, SKIPPING, ci)
    assert result.returncode == 0, result.stdout
    assert "1 passed, 2 skipped" in result.stdout
    assert "apt-get install totem-frobnicator" in result.stdout
