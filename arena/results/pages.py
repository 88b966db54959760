"""HTML pages from the Jinja2 templates in ``templates/``, escaped by default.

Every page the arena writes (the report, ``arena standings -f html``,
``arena games -f html``) is a template here, rendered with ``autoescape``
on: a name, a reason or a description from a results file is text wherever
a template puts it, in element text or a quoted attribute, without a call
to remember at each place.  What is already markup (a chart's SVG, the
stylesheet) says so by being :class:`~markupsafe.Markup`; JSON inside a
``<script>`` goes through ``|tojson``, which leaves no ``<``, ``>``, ``&``
or ``'`` in it, so no ``</script>`` or ``<!--`` in the data can end it.

Each ``{{ }}`` of text goes through :func:`arena.base.text.safe` for HTML
(:func:`_finalize`): cleaned of control characters and cut as every other
destination cleans and cuts it, then escaped.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from arena.base.text import safe

__all__ = ["Markup", "SCRIPT_JSON", "render"]

#: How ``|tojson`` writes JSON: compact, and ASCII, so that no text read from
#: a results file (a lone surrogate among them) can stop a page being written.
SCRIPT_JSON: dict[str, Any] = {"separators": (",", ":"), "ensure_ascii": True}


def _finalize(value: Any) -> Any:
    """A ``{{ }}``'s value as it is written: text through :func:`safe`
    (cleaned and escaped, the escaping autoescape would do), markup and
    numbers as they are (autoescape writes a number as its ``str``)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return _html_text(value)
    return value


@lru_cache(maxsize=1 << 16)
def _html_text(text: str) -> Markup:
    # Names, reasons and numbers repeat from row to row (a list of a million games): each is made safe once.
    return Markup(safe(text, "html"))


if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def _environment() -> Environment:
    # Jinja2 imported when a page is first drawn: most commands draw none, and its import is a tenth of
    # the start of a command answered from the index.
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader(__package__, "templates"),
        autoescape=True,
        finalize=_finalize,
        undefined=StrictUndefined,  # a misspelt name fails the page, never shows as nothing
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = SCRIPT_JSON
    env.globals["zip"] = zip
    return env


def render(template: str, **context: Any) -> str:
    """The page (or part of one) ``template`` makes of ``context``."""
    return _environment().get_template(template).render(**context)
