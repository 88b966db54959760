"""What a test needs from the machine: a program or a Python package.

A missing one skips the test, saying what to install; in CI (``CI=true``)
conftest.py turns that skip into a failure, as it does every skip: CI
installs everything (the README's test command), so a missing package there
is a broken install.
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest


def _missing(what: str, install: str) -> None:
    pytest.skip(f"{what} is missing: {install}")


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


def bwrap() -> str:
    """The path of bubblewrap, the sandbox of ``sandbox: bwrap``, or skip (fail in CI)."""
    return program("bwrap", "apt-get install bubblewrap (sh scripts/install-test-deps.sh)")
