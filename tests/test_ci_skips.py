"""In CI a test that skips fails: conftest.py says so, for every skip."""

from __future__ import annotations

import pytest

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


def run_pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, source: str, ci: str
               ) -> tuple[int, str]:
    """A pytest session of ``source`` with this suite's conftest as its only
    plugin, in this process (pytester): a nested pytest process would cost
    seconds of start-up, for the same hooks run on the same reports."""
    monkeypatch.setenv("CI", ci)
    test_file = pytester.makepyfile(test_sample=source)
    # Without hypothesis's plugin: the session would import hypothesis afresh, and pytester forget it after.
    result = pytester.runpytest_inprocess("-q", "-rA", "-p", "conftest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                          "-n", "0", str(test_file))
    return result.ret, result.stdout.str()


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_every_skip_is_a_failure_naming_its_reason(pytester, monkeypatch, ci):
    ret, stdout = run_pytest(pytester, monkeypatch, SKIPPING, ci)
    assert ret == 1, stdout
    assert "2 failed, 1 passed" in stdout
    assert "skipped in CI, where every test must run: the program 'no-such-program-totem' is missing: " \
        "apt-get install totem-frobnicator" in stdout
    assert "skipped in CI, where every test must run: not today" in stdout


def test_in_ci_a_module_skipped_at_import_is_a_failure(pytester, monkeypatch):
    ret, stdout = run_pytest(pytester, monkeypatch, SKIPPED_MODULE, "true")
    assert ret != 0 and "skipped in CI" in stdout, stdout


@pytest.mark.parametrize("ci", ["", "false"])
def test_outside_ci_a_skip_says_what_to_install(pytester, monkeypatch, ci):
    ret, stdout = run_pytest(pytester, monkeypatch, SKIPPING, ci)
    assert ret == 0, stdout
    assert "1 passed, 2 skipped" in stdout
    assert "apt-get install totem-frobnicator" in stdout
