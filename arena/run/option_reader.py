"""A command-line value ``key=value,key=value`` read as a section of a
tournament file, so that one parser serves both (``arena match --sprt
elo0=0,elo1=5`` and ``sprt: {elo0: 0, elo1: 5}``, see
:func:`arena.run.config.sprt_section`).

:class:`OptionMapping` offers the reads those parsers make of a
:class:`~arena.run.yaml_reader.YamlMapping`, worded for the command line:
every error names the option and the setting as typed.

    >>> settings = OptionMapping("--openings", "plies=4,count=x", label="setting", usage="plies=4,count=50")
    >>> settings.integer("plies", 0)
    4
    >>> settings.integer("count", 50)
    Traceback (most recent call last):
    ...
    arena.run.yaml_reader.ConfigError: --openings plies=4,count=x: bad setting 'count=x': 'x' is not an integer
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from arena.run.yaml_reader import ConfigError, unknown_key

__all__ = ["OptionMapping"]

_T = TypeVar("_T")


class OptionMapping:
    """The settings of one option: ``option`` names it in errors, ``label``
    says what a setting is (``bad SPRT setting 'elo=0': ...``), ``usage`` how
    to write them.  A value without any ``=`` is the value of ``bare_key``
    (``--openings suite.txt`` is ``file=suite.txt``); without a bare key it is
    refused."""

    def __init__(self, option: str, text: str, *, label: str, usage: str, bare_key: str | None = None) -> None:
        self._where = f"{option} {text}"
        self._label = label
        self._usage = usage
        #: Each setting's value and, for messages, the setting as typed.
        self._values: dict[str, str] = {}
        self._typed: dict[str, str] = {}
        if bare_key is not None and "=" not in text:
            self._values[bare_key] = self._typed[bare_key] = text
            return
        for part in text.split(","):
            key, equals, value = (x.strip() for x in part.partition("="))
            if not equals:
                raise self._bad(part.strip(), f"write {usage}")
            if key in self._values:
                raise self._bad(part.strip(), "given twice")
            self._values[key], self._typed[key] = value, part.strip()

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    # -- errors -----------------------------------------------------------------

    def _bad(self, typed: str, problem: str) -> ConfigError:
        return ConfigError(f"bad {self._label} {typed!r}: {problem}", file=self._where)

    def error(self, problem: str, key: str | None = None) -> ConfigError:
        """A problem with the setting ``key``, or with the whole option."""
        if key is not None and key in self._typed:
            return self._bad(self._typed[key], problem)
        return ConfigError(problem, file=self._where)

    def missing(self, key: str) -> ConfigError:
        return ConfigError(f"needs {key}: write {self._usage}", file=self._where)

    def file_error(self, path: Path, line: int | None, problem: str) -> ConfigError:
        """A problem in the file the option names, at its line."""
        return ConfigError(problem, file=self._where, line=line)

    def allow(self, known: Sequence[str]) -> None:
        for key in self._values:
            if key not in known:
                raise self._bad(self._typed[key], unknown_key(key, known))

    def require(self, *keys: str) -> None:
        for key in keys:
            if key not in self._values:
                raise self.missing(key)

    def _default(self, key: str, default: _T | None) -> _T:
        if default is None:
            raise self.missing(key)
        return default

    # -- typed readers ----------------------------------------------------------

    def path(self, key: str, default: Path | None = None) -> Path:
        if key not in self:
            return self._default(key, default)
        text = self._values[key]
        if not text or "\0" in text:
            raise self.error(f"{text!r} is not a path", key)
        return Path(os.path.expanduser(text))

    def integer(self, key: str, default: int | None = None) -> int:
        if key not in self:
            return self._default(key, default)
        try:
            return int(self._values[key])
        except ValueError:
            raise self.error(f"{self._values[key]!r} is not an integer", key) from None

    def number(self, key: str, default: float | None = None) -> float:
        """A finite number."""
        if key not in self:
            return self._default(key, default)
        text = self._values[key]
        try:
            value = float(text)
        except ValueError:
            raise self.error(f"{text!r} is not a number", key) from None
        if not math.isfinite(value):
            raise self.error(f"{text!r} is not a finite number", key)
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str:
        """One of ``choices``, in any case; the first when the key is absent."""
        if key not in self:
            return choices[0]
        value = self._values[key].strip().lower()
        if value not in choices:
            raise self.error(f"unknown value {self._values[key]!r}; use one of: {', '.join(choices)}", key)
        return value
