"""What a test needs from the machine: a program or a Python package.

Outside CI a missing one skips the test, saying what to install.  In CI
(``CI=true``) it fails the test: CI installs everything (the README's test
command), so a missing package there is a broken install, never a skip.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing(what: str, install: str) -> None:
    message = f"{what} is missing: {install}"
    if IN_CI:
        pytest.fail(message + " (CI must have it)", pytrace=False)
    pytest.skip(message)


def program(name: str, install: str) -> str:
    """The path of program ``name``, or skip (fail in CI) saying ``install``."""
    path = shutil.which(name)
    if path is None:
        _missing(f"the program {name!r}", install)
    return path  # type: ignore[return-value]


def module(name: str, install: str) -> None:
    """Skip (fail in CI) unless Python package ``name`` can be imported."""
    if importlib.util.find_spec(name) is None:
        _missing(f"the Python package {name!r}", install)
