"""Text that came from a bot or from a results file, made safe for where it goes.

A bot chooses what it writes to stderr, its ``error`` and ``ready`` messages
and its ``info``; anyone who can write to a results directory (a bot without
the sandbox, a person with an editor) chooses every field of a record.  Such
text reaches the organiser's terminal, Markdown, HTML and CSV, and each
destination has its own way to be taken over: a terminal obeys escape
sequences (a window title, a cleared screen, a clipboard write through OSC
52), Markdown passes raw HTML and a ``|`` ends a table cell, HTML runs
markup, a spreadsheet runs a cell that starts with ``=`` as a formula.

Two steps, always in this order:

- :func:`clean_text`: one line of printable text, every other character
  (C0 and C1 controls, ``ESC`` among them, ``DEL``, line and paragraph
  separators, right-to-left overrides and other format characters, lone
  surrogates) shown as its Python escape, at most so many characters.
  Records keep text in this form.
- :func:`safe`: that, then the destination's own escaping (see
  :data:`DESTINATIONS`).  Every command that shows bot- or file-derived text
  goes through it.
"""

from __future__ import annotations

import html
import unicodedata
from typing import Any

__all__ = ["DESTINATIONS", "SHOWN_CHARS", "clean_text", "clean_tail", "safe", "json_kind"]

#: Where text goes: ``terminal`` (also plain text files: only the cleaning),
#: ``markdown`` (GitHub's: no raw HTML, no link or image, no ``|`` that
#: splits a table cell), ``html`` (element text and quoted attribute values)
#: and ``csv`` (a cell no spreadsheet takes for a formula).
DESTINATIONS = ("terminal", "markdown", "html", "csv")

#: The most characters of one piece of text :func:`safe` shows by default
#: (a forfeit's ``detail`` is at most 1000 characters).
SHOWN_CHARS = 1000

# Entities for what starts HTML (a backslash before ``<`` is not enough for
# every renderer); a backslash before what ends a table cell (``|``), starts
# a link or an image (``[``), a code span, emphasis or a strikethrough (game
# ids hold ``~``), and before a backslash, so that no text can undo the
# escape that follows it.  ``_`` is left alone: within a word (``random_bot``,
# ``startup_failure``) it is no emphasis.
_MARKDOWN = str.maketrans({
    **{ch: "\\" + ch for ch in "\\`*[|~"},
    "<": "&lt;", ">": "&gt;", "&": "&amp;",
})
# OWASP's CSV injection advice: a cell starting with one of these is a
# formula to Excel, LibreOffice and Google Sheets (tab and carriage return
# cannot start a cleaned text).  A spreadsheet may trim leading spaces and
# read a full-width sign (＝, ＋, －, ＠) as its ASCII twin, so a cell is judged
# by its first character after spaces, in compatibility form (NFKC).
_FORMULA_STARTS = ("=", "+", "-", "@")


def _shown(ch: str) -> str:
    return ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")


def clean_text(value: Any, limit: int | None = 200, ellipsis: str = "...") -> str:
    """Text from a bot made safe to store and print: one line, control
    characters (an escape sequence among them) and lone surrogates escaped,
    at most ``limit`` characters (``None``: no limit), then ``ellipsis`` if
    some were cut (never half an escape).  Anything that is not a string is
    named by its type, never printed (a deeply nested list cannot even be
    printed)."""
    if not isinstance(value, str):
        return f"(not text but {json_kind(value)})"
    # Escaping only lengthens text: what shows is in the first ``limit`` characters.
    head = value if limit is None else value[:limit]
    cut = len(head) < len(value)
    if head.isprintable():
        return head + ellipsis if cut else head
    shown: list[str] = []
    size = 0
    for ch in head:
        piece = _shown(ch)
        size += len(piece)
        if limit is not None and size > limit:
            return "".join(shown) + ellipsis
        shown.append(piece)
    return "".join(shown) + ellipsis if cut else "".join(shown)


def clean_tail(value: str, limit: int, ellipsis: str = "...") -> str:
    """The end of ``value`` as :func:`clean_text` would show it: at most
    ``limit`` characters, ``ellipsis`` first if some were cut (never half an
    escape).  For the last words a bot wrote on stderr."""
    tail = value[-limit:]
    cut = len(tail) < len(value)
    if tail.isprintable():
        return ellipsis + tail if cut else tail
    shown: list[str] = []
    size = 0
    for ch in reversed(tail):
        piece = _shown(ch)
        size += len(piece)
        if size > limit:
            return ellipsis + "".join(reversed(shown))
        shown.append(piece)
    return (ellipsis if cut else "") + "".join(reversed(shown))


def safe(value: Any, destination: str = "terminal", *, limit: int | None = SHOWN_CHARS, lines: bool = False) -> str:
    """``value`` (text from a bot or a results file) as it may be written to
    ``destination``, one of :data:`DESTINATIONS`: cleaned by
    :func:`clean_text` to at most ``limit`` characters, then escaped for the
    destination.  With ``lines``, a text of several lines (a whole message
    to print) keeps its line breaks, each line cleaned and not cut."""
    if lines and isinstance(value, str):
        return "\n".join(safe(line, destination, limit=None) for line in value.split("\n"))
    text = clean_text(value, limit)
    if destination == "terminal":
        return text
    if destination == "markdown":
        return text.translate(_MARKDOWN)
    if destination == "html":
        return html.escape(text, quote=True)
    if destination == "csv":
        return "'" + text if _is_formula(text) else text
    raise ValueError(f"unknown destination {destination!r}; use one of {', '.join(DESTINATIONS)}")


def _is_formula(text: str) -> bool:
    """Whether a spreadsheet might run ``text`` as a formula (see :data:`_FORMULA_STARTS`)."""
    # NFKC of a cut text is at most a few times longer: judged on its first characters only.
    start = unicodedata.normalize("NFKC", text[:64]).lstrip()
    return start.startswith(_FORMULA_STARTS) and not _is_number(text)


def _is_number(text: str) -> bool:
    """A number a spreadsheet reads as one (``-12``, ``+3.5``, ``-inf``), or
    the tables' ``-`` for nothing: neither is a formula."""
    if text == "-":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def json_kind(value: Any) -> str:
    """What a JSON value is, in words (``a list``), to name a value that is not shown."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), "null")
