"""Builders the tests share: results as the readers see them, from records
and a ``tournament.json`` written as a dict."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.game.records import GameRecord
from arena.results.meta import TournamentMeta
from arena.results.reading import ReadResults, results_of
from arena.results.report import build_report
from arena.results.sprt import SprtConfig


def meta_of(meta: dict[str, Any] | None) -> TournamentMeta | None:
    """The typed record of a ``tournament.json`` given as a dict (None for none or ``{}``)."""
    return TournamentMeta.from_json(meta) if meta else None


def results(records: Sequence[GameRecord], meta: dict[str, Any] | None = None, *, sprt: SprtConfig | None = None,
            directory: Path = Path(".")) -> ReadResults:
    """``records`` under ``meta`` as every reading command reads them."""
    return results_of(directory, meta_of(meta), records, sprt=sprt)


def report_page(records: Sequence[GameRecord], meta: dict[str, Any] | None = None, *, sprt: SprtConfig | None = None,
                **options: Any) -> str:
    """The report page of ``records`` under ``meta`` (``options``: those of :func:`build_report`)."""
    return build_report(results(records, meta, sprt=sprt), **options)
