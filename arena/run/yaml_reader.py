"""YAML that knows its lines: a document read value by value, every mistake
refused in one line that names the file, the line and the key path
(``demo.yaml:7: bots[1].name: must be a string, got integer``).

PyYAML's loaded values forget where they were written, its composed nodes do
not: so the document is composed, and each value is built from its node only
when a typed reader of :class:`YamlMapping` asks for it.  Merge keys
(``<<: *anchor``) are resolved as YAML loading resolves them, but a key given
twice is refused rather than silently overwritten.  A small file must not
cost a lot: a mapping merged many times over is resolved once, and the JSON
values built through aliases are counted (merge-key and alias bombs).

    >>> fields = read_yaml("rounds: 2\\nseed: yes\\n", "demo.yaml").mapping("must be a mapping")
    >>> fields.integer("rounds", 1), fields.integer("concurrency", 1)
    (2, 1)
    >>> fields.integer("seed", 0)
    Traceback (most recent call last):
    ...
    arena.run.yaml_reader.ConfigError: demo.yaml:2: seed: must be an integer, got boolean 'yes'
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml

__all__ = ["ConfigError", "MAX_JSON_DEPTH", "MAX_JSON_INT", "MAX_JSON_VALUES", "YamlMapping", "YamlValue", "kind_of", "read_yaml", "unknown_key"]

#: The values a document's JSON (a bot's ``options``) may expand to through aliases.
MAX_JSON_VALUES = 100_000
#: How deep a bot's option may nest lists and mappings, and how large a whole
#: number it may be: what a bot in any language reads from a JSON message
#: (2**53, the largest whole number a double holds exactly).
MAX_JSON_DEPTH = 32
MAX_JSON_INT = 2**53

_MERGE_TAG = "tag:yaml.org,2002:merge"
#: A key node and its value node.
_Pair = tuple[yaml.Node, yaml.Node]
_T = TypeVar("_T")


class ConfigError(ValueError):
    """A tournament file that cannot be used.  ``str()`` is one line:
    ``<file>:<line>: <key path>: <what is wrong>`` (line and key left out when
    there is none, e.g. for a file that cannot be read)."""

    def __init__(self, problem: str, *, file: str = "<string>", line: int | None = None, key: str = "") -> None:
        self.problem = " ".join(problem.split())
        self.file = file
        self.line = line
        self.key = key
        super().__init__(self.problem)

    def __str__(self) -> str:
        parts = [self.file] if self.file else []
        if self.line is not None:
            parts.append(str(self.line))
        if self.key:
            parts.append(f" {self.key}")
        parts.append(f" {self.problem}")
        return ":".join(parts).lstrip()


def read_yaml(text: str, file: str) -> YamlValue | None:
    """The document in ``text``, ``file`` naming it in errors; None when it
    holds nothing (only comments, say).  Raises :class:`ConfigError` for text
    that is not YAML, or more than one document."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "unreadable"
        raise ConfigError(f"bad YAML: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"bad YAML: {exc}", file=file) from None
    except RecursionError:  # the composer recurses once per level of [[[...]]]
        raise ConfigError("bad YAML: lists or mappings nested too deeply to read", file=file) from None
    return None if root is None else YamlValue(_Document(file), root, "")


def unknown_key(key: object, known: Sequence[str]) -> str:
    """The problem with a key that is not among ``known``: the closest known
    one, or else all of them."""
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(known)}"
    return f"unknown key {key!r}{hint}"


def kind_of(value: Any) -> str:
    """A YAML-ish name for a value's type, for messages."""
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        bytes: "binary",
    }.get(type(value), type(value).__name__)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class _Document:
    """What the values of one document share: the file they are named by, the
    constructor of scalars, and the budgets against bombs."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.loader = yaml.SafeLoader("")
        # Entries by mapping node: a mapping merged many times over is
        # resolved once, so a merge-key bomb costs no more than its size.
        self._entries: dict[int, dict[Any, _Pair]] = {}
        #: JSON values built so far, against alias bombs.
        self._json_values = 0

    def error(self, node: yaml.Node | None, where: str, problem: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else None
        return ConfigError(problem, file=self.file, line=line, key=where)

    def scalar(self, node: yaml.Node, where: str) -> Any:
        """The YAML value of a scalar node; a list or mapping node comes back
        as an empty one, so that type checks name its kind."""
        if not isinstance(node, yaml.ScalarNode):
            return [] if isinstance(node, yaml.SequenceNode) else {}
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:  # an unknown or unsafe tag such as !!python/object
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.error(node, where, f"bad value {node.value!r}: {problem}") from None

    def entries(self, node: yaml.MappingNode, where: str, enclosing: frozenset[int] = frozenset()) -> dict[Any, _Pair]:
        """A mapping's (key node, value node) pairs by key, with ``<<: *anchor``
        merge keys resolved as YAML loading does (the mapping's own keys win,
        then earlier merged mappings).  Duplicate keys are refused: plain YAML
        loading would silently keep the last one."""
        if id(node) in enclosing:
            raise self.error(node, _join(where, "<<"), "a merge key that includes its own mapping")
        if id(node) in self._entries:
            return self._entries[id(node)]
        inherited: dict[Any, _Pair] = {}
        own: dict[Any, _Pair] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        raise self.error(source, _join(where, "<<"), "takes a mapping or a list of mappings")
                    for key, pair in self.entries(source, where, enclosing | {id(node)}).items():
                        inherited.setdefault(key, pair)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, where, "a key must be a plain name, not a list or mapping")
            key = self.scalar(key_node, where)
            if key in own:
                problem = f"duplicate key {key!r} (first on line {own[key][0].start_mark.line + 1})"
                raise self.error(key_node, _join(where, str(key)), problem)
            own[key] = (key_node, value_node)
        entries = {key: pair for key, pair in inherited.items() if key not in own} | own
        self._entries[id(node)] = entries
        return entries

    def json(self, node: yaml.Node, where: str, name: str, open_nodes: set[int]) -> Any:
        """The node as a JSON-compatible value: options travel to the bot in
        the hello message, so dates, binary and non-string keys are refused
        here rather than breaking the tournament later."""
        if id(node) in open_nodes:
            raise self.error(node, where, "a recursive alias cannot be sent as JSON")
        if len(open_nodes) > MAX_JSON_DEPTH:
            raise self.error(node, where, f"the {name} nest lists or mappings more than {MAX_JSON_DEPTH} deep")
        self._json_values += 1
        if self._json_values > MAX_JSON_VALUES:
            raise self.error(
                node, where, f"the {name} expand to more than {MAX_JSON_VALUES} values (YAML aliases repeat what they name)"
            )
        if isinstance(node, yaml.MappingNode):
            open_nodes.add(id(node))
            result: dict[str, Any] = {}
            for key, (key_node, value_node) in self.entries(node, where).items():
                if not isinstance(key, str):
                    raise self.error(key_node, where, f"keys must be strings, got {kind_of(key)} {key!r} (quote it)")
                result[key] = self.json(value_node, _join(where, key), name, open_nodes)
            open_nodes.discard(id(node))
            return result
        if isinstance(node, yaml.SequenceNode):
            open_nodes.add(id(node))
            items = [self.json(item, f"{where}[{i}]", name, open_nodes) for i, item in enumerate(node.value)]
            open_nodes.discard(id(node))
            return items
        value = self.scalar(node, where)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_JSON_INT:
            raise self.error(node, where, f"{node.value} is beyond ±2**53, the whole numbers a bot reads exactly from JSON (quote it)")
        if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
            return value
        raise self.error(node, where, f"{node.value!r} ({kind_of(value)}) cannot be sent to the bot as JSON (quote it)")


class YamlValue:
    """One value of the document and its key path (``bots[1].cmd``)."""

    def __init__(self, document: _Document, node: yaml.Node, where: str) -> None:
        self._document = document
        self.node = node
        self.where = where

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1

    @property
    def raw(self) -> str | None:
        """A scalar's text as written (``yes``, ``1:30``); None for a list or mapping."""
        return self.node.value if isinstance(self.node, yaml.ScalarNode) else None

    @property
    def is_list(self) -> bool:
        return isinstance(self.node, yaml.SequenceNode)

    def error(self, problem: str) -> ConfigError:
        return self._document.error(self.node, self.where, problem)

    def scalar(self) -> Any:
        """The value (an empty list or mapping for a list or mapping, so that
        type checks name its kind)."""
        return self._document.scalar(self.node, self.where)

    def shown(self, value: Any) -> str:
        """``value``'s kind and, for a scalar, its text as written: ``boolean 'yes'``."""
        return f"{kind_of(value)} {self.raw!r}" if self.raw is not None else kind_of(value)

    def text(self, problem: str) -> str:
        """A scalar's text as written, not its YAML value: ``10`` stays "10" and
        ``1:30`` is not read as the YAML 1.1 sexagesimal integer 90."""
        if self.raw is None:
            raise self.error(problem)
        return self.raw

    def items(self, problem: str = "must be a list") -> list[YamlValue]:
        """A list's items (``bots[0]``, ``bots[1]``, ...); ``problem`` when it is not a list."""
        if not isinstance(self.node, yaml.SequenceNode):
            raise self.error(problem)
        return [YamlValue(self._document, item, f"{self.where}[{i}]") for i, item in enumerate(self.node.value)]

    def mapping(self, problem: str) -> YamlMapping:
        """The value as a mapping; ``problem`` when it is not one."""
        if not isinstance(self.node, yaml.MappingNode):
            raise self.error(problem)
        return YamlMapping(self._document, self.node, self.where)


class YamlMapping:
    """A mapping's values by key, with typed readers.  A reader given no
    default requires the key; each refuses a wrong value with its line."""

    def __init__(self, document: _Document, node: yaml.MappingNode, where: str) -> None:
        self._document = document
        self.node = node
        self.where = where
        self._entries = document.entries(node, where)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[Any]:
        return iter(self._entries)

    def __getitem__(self, key: Any) -> YamlValue:
        return YamlValue(self._document, self._entries[key][1], _join(self.where, str(key)))

    def get(self, key: str) -> YamlValue | None:
        return self[key] if key in self._entries else None

    def items(self) -> Iterator[tuple[Any, YamlValue]]:
        return ((key, self[key]) for key in self._entries)

    # -- errors -----------------------------------------------------------------

    def error(self, problem: str, key: str | None = None) -> ConfigError:
        """A problem with the value at ``key``, or with the whole mapping."""
        if key is not None and key in self._entries:
            return self[key].error(problem)
        return self._document.error(self.node, _join(self.where, key) if key else self.where, problem)

    def key_error(self, key: Any, problem: str) -> ConfigError:
        """A problem with the key itself (a bad variable name, say)."""
        return self._document.error(self._entries[key][0], self.where, problem)

    def missing(self, key: str) -> ConfigError:
        return self.error("required key missing", key)

    def file_error(self, path: Path, line: int | None, problem: str) -> ConfigError:
        """A problem in a file the mapping names (an opening suite), at its own line."""
        return ConfigError(problem, file=str(path), line=line)

    def allow(self, known: Sequence[str]) -> None:
        """Refuse a key that is not among ``known``, suggesting the closest."""
        for key, (key_node, _) in self._entries.items():
            if key not in known:
                raise self._document.error(key_node, _join(self.where, str(key)), unknown_key(key, known))

    def require(self, *keys: str) -> None:
        for key in keys:
            if key not in self._entries:
                raise self.missing(key)

    def _default(self, key: str, default: _T | None) -> _T:
        if default is None:
            raise self.missing(key)
        return default

    # -- typed readers ----------------------------------------------------------

    def string(self, key: str, default: str | None = None) -> str:
        if key not in self:
            return self._default(key, default)
        value = self[key]
        text = value.scalar()
        if not isinstance(text, str):
            raise value.error(f"must be a string, got {kind_of(text)}")
        return text

    def path(self, key: str, default: Path | None = None) -> Path:
        """A path as written (``~`` expanded), for the caller to resolve."""
        if key not in self:
            return self._default(key, default)
        text = self.string(key)
        if not text or "\0" in text:
            raise self[key].error(f"{text!r} is not a path")
        return Path(os.path.expanduser(text))

    def integer(self, key: str, default: int | None = None) -> int:
        if key not in self:
            return self._default(key, default)
        value = self[key]
        number = value.scalar()
        # bool is a subclass of int, but `seed: yes` is surely a mistake.
        if not isinstance(number, int) or isinstance(number, bool):
            raise value.error(f"must be an integer, got {value.shown(number)}")
        return number

    def positive_int(self, key: str, default: int | None = None) -> int:
        number = self.integer(key, default)
        if number < 1:
            raise self.error(f"must be a positive integer, got {number}", key)
        return number

    def number(
        self,
        key: str,
        default: float | None = None,
        *,
        unit: str = "a number",
        must_be: Literal["not negative", "positive"] | None = None,
    ) -> float:
        """A finite number (``.inf`` and ``.nan`` are refused), of ``unit`` in messages."""
        if key not in self:
            return self._default(key, default)
        value = self[key]
        number = value.scalar()
        if not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number):
            raise value.error(f"must be {unit}, got {value.shown(number)}")
        if (must_be == "not negative" and number < 0) or (must_be == "positive" and number <= 0):
            raise value.error(f"must be {must_be}, got {number:g}")
        return float(number)

    def boolean(self, key: str, default: bool | None = None) -> bool:
        if key not in self:
            return self._default(key, default)
        value = self[key]
        flag = value.scalar()
        if not isinstance(flag, bool):
            raise value.error(f"must be true or false, got {value.shown(flag)}")
        return flag

    def choice(self, key: str, choices: Sequence[str]) -> str:
        """One of ``choices``, in any case; the first when the key is absent."""
        if key not in self:
            return choices[0]
        value = self[key]
        name = value.scalar()
        if not isinstance(name, str) or name.strip().lower() not in choices:
            raise value.error(f"unknown value {name!r}; use one of: {', '.join(choices)}")
        return name.strip().lower()

    def json(self, name: str) -> dict[str, Any]:
        """The mapping as a JSON object (``name``, plural, in messages): see
        :meth:`_Document.json`."""
        return self._document.json(self.node, self.where, name, set())
