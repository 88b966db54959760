"""arena.base.text: text from a bot or a results file, made safe for a
terminal, Markdown, HTML and CSV."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from tabulate import tabulate

from arena.base.text import DESTINATIONS, clean_tail, clean_text, safe

#: What a hostile bot writes: window title (OSC 0), clear screen, clipboard
#: write (OSC 52), bell, C1 controls (CSI, OSC, ST), a carriage return that
#: overwrites the line, backspaces, a right-to-left override, a lone surrogate.
HOSTILE = "\x1b]0;PWNED\x1b\\ \x1b[2J\x1b]52;c;cHduZWQ=\x07 \x9b31m\x9d0;C1\x9c fake\rok \u202egnp.exe \x08\x08 \ud800 \x7f"
#: Any control character a terminal may act on (C0 but the line break, DEL, C1),
#: and what else is not printable (bidi overrides, lone surrogates).
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def test_clean_text_is_one_bounded_printable_line():
    assert clean_text("fine") == "fine"
    assert clean_text("a\nb\x1b[31m\ud800") == "a\\nb\\x1b[31m\\ud800"
    assert clean_text("x" * 300, 10) == "x" * 10 + "..."
    assert clean_text("\x1b" * 10, 10) == "\\x1b\\x1b..."  # never half an escape
    assert clean_text("x" * 300, None) == "x" * 300
    assert clean_text(None) == "(not text but null)"
    assert clean_text(json.loads("[" * 900 + "]" * 900)) == "(not text but a list)"  # never printed whole


def test_clean_tail_keeps_the_end_and_never_half_an_escape():
    assert clean_tail("short", 300) == "short"
    assert clean_tail("a" * 10 + "end", 5) == "...aaend"
    assert clean_tail("head\x1b[2J", 8) == "...d\\x1b[2J"
    assert clean_tail("\x1b" * 10, 9) == "...\\x1b\\x1b"


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_no_destination_gets_a_control_character(destination):
    text = safe(HOSTILE, destination)
    assert not CONTROL.search(text), text
    assert "x1b]0;PWNED" in text and "x1b]52;c;" in text  # shown escaped, not dropped
    text.encode("utf-8")  # no lone surrogate: any output stream can take it


def test_terminal_text_is_bounded_and_lines_keep_their_breaks():
    assert safe("x" * 5000) == "x" * 1000 + "..."
    assert safe("x" * 50, limit=10) == "x" * 10 + "..."
    assert safe(f"one {HOSTILE}\ntwo\x1b[2J", lines=True).split("\n")[1] == "two\\x1b[2J"
    assert safe("a\nb") == "a\\nb"  # one piece of text stays one line: no forged line under it
    assert safe({"not": "text"}) == "(not text but an object)"


def test_markdown_passes_no_html_no_link_and_no_table_break():
    text = safe('<img src=x onerror=alert(1)> & <script>x</script> [a](http://t) ![i](http://t/p.png) `c` *e* ~s~ a|b \\|', "markdown")
    assert "<" not in text and ">" not in text and "&lt;img" in text and "&amp;" in text
    assert "\\[a](http" in text and "!\\[i]" in text  # no link, no image fetched
    assert "a\\|b" in text and "\\\\\\|" in text  # a backslash cannot undo the escape of |
    assert "\\`c\\`" in text and "\\*e\\*" in text and "\\~s\\~" in text
    assert safe("random_bot startup_failure") == "random_bot startup_failure"  # within a word, _ is no emphasis
    # In a GitHub table a hostile cell stays one cell: the only | a Markdown
    # reader splits on are tabulate's (an escaped backslash is no escape).
    for cell, pieces in (("a|b\\|c", 4), (safe("a|b\\|c", "markdown"), 3)):
        row = tabulate([[cell]], headers=["bot"], tablefmt="github").splitlines()[2]
        assert len(re.split(r"(?<!\\)\|", row.replace("\\\\", ""))) == pieces, row


def test_html_escapes_markup_and_quotes():
    text = safe('<b onmouseover="x">\'&', "html")
    assert text == "&lt;b onmouseover=&quot;x&quot;&gt;&#x27;&amp;"


@pytest.mark.parametrize("cell", ["=1+1", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "=HYPERLINK(\"http://t\")",
                                  " =1+1", "  @SUM(A1)", "＝1+1", "＋1+1", " －2+3", "＠SUM(A1)", "﹦1"])
def test_csv_neutralises_formulas(cell):
    text = safe(cell, "csv")
    assert text == "'" + cell
    out = io.StringIO()
    csv.writer(out).writerow([text])
    assert next(csv.reader(io.StringIO(out.getvalue()))) == [text]


@pytest.mark.parametrize("cell", ["-12", "+120", "-0.3", "-inf", "-", "alpha", "≈ 93.0%", "0/4", " -12", " alpha"])
def test_csv_keeps_numbers_and_plain_text(cell):
    assert safe(cell, "csv") == cell


def test_csv_cell_starting_with_a_tab_is_escaped_first():
    assert safe("\t=1+1", "csv") == "\\t=1+1"


def test_unknown_destination_is_refused():
    with pytest.raises(ValueError, match="unknown destination 'pdf'"):
        safe("x", "pdf")
