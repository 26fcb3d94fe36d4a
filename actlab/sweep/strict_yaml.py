"""Reading a sweep file as YAML that is also JSON: bounded, no duplicate keys, every error naming file and key.

Why not plain `yaml.safe_load`: a sweep file's values become notebook parameters and JSON records, and a spec may
come from someone else. `safe_load` runs no code, but it accepts what later fails far from its cause or never:

- duplicate keys: the last one silently wins;
- values JSON cannot hold (a date, `!!binary`, a set, `.nan`), which would fail at the first `json.dump` naming
  no file or key;
- aliases that expand exponentially: cheap to load (PyYAML shares them), but every later `json.dumps` expands them.

So the file's size (`MAX_FILE_BYTES`), nesting (`MAX_DEPTH`) and expanded size (`MAX_EXPANDED_CHARS`, counted
once per shared object, so counting never expands) are bounded before anything is built from it.
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any

import yaml

from actlab.errors import ActlabError

MAX_FILE_BYTES = 1_000_000
MAX_EXPANDED_CHARS = 1_000_000  # the spec as JSON text, aliases expanded: a real sweep file is a few hundred
MAX_DEPTH = 50
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, first: yaml.Mark, again: yaml.Mark) -> None:
        super().__init__(f"duplicate key {key!r} at line {again.line + 1} (first at line {first.line + 1})")


class _StrictLoader(yaml.SafeLoader):
    """`SafeLoader` that refuses a key given twice in one mapping (a `<<:` merge may still be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue  # merges are flattened by SafeLoader; complex keys fail there with its own message
            key = self.construct_object(key_node)
            if key in seen:
                raise _DuplicateKey(key, seen[key], key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: Path) -> Any:
    """The file's YAML as plain JSON data (dict, list, str, int, finite float, bool, None); else `ActlabError`.

    Every error is one line starting with the file's path and naming the line or the key (`fixed.when`).
    """
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ActlabError(f"{path}: {size:,} bytes; a sweep file holds at most {MAX_FILE_BYTES:,}")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as error:
        raise ActlabError(f"{path}: {error}; keep one") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ActlabError(f"{path}: not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise ActlabError(f"{path}: nested too deeply; a sweep file nests at most {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as error:
        raise ActlabError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    chars = _JsonCheck(path).size(data, "", 0)
    if chars > MAX_EXPANDED_CHARS:
        raise ActlabError(
            f"{path}: its values expand to about {chars:,} characters (aliases included); the limit is "
            f"{MAX_EXPANDED_CHARS:,}: write the values out, or use fewer nested aliases"
        )
    return data


class _JsonCheck:
    """One walk that refuses non-JSON values by key path and sizes the data, each shared object once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sizes: dict[int, int] = {}

    def fail(self, where: str, message: str) -> ActlabError:
        return ActlabError(f"{self.path}: {where or 'the file'}: {message}")

    def size(self, value: Any, where: str, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise self.fail(where, f"nested deeper than {MAX_DEPTH} levels")
        if value is None or isinstance(value, bool | int):
            return len(str(value))
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(where, f"{value} is not a finite number (JSON cannot hold it)")
            return len(repr(value))
        if isinstance(value, str):
            return len(value) + 2
        if not isinstance(value, dict | list):
            raise self.fail(where, _not_json(value))
        known = self.sizes.get(id(value))
        if known is not None:  # an alias: counted, not walked again
            return known
        total = 2
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise self.fail(where, f"key {key!r} is a {type(key).__name__}; keys are strings or numbers")
                inner = f"{where}.{key}" if where else str(key)
                total += len(str(key)) + 4 + self.size(item, inner, depth + 1)
        else:
            for index, item in enumerate(value):
                total += 2 + self.size(item, f"{where}[{index}]", depth + 1)
        self.sizes[id(value)] = total
        return total


def _not_json(value: Any) -> str:
    if isinstance(value, _dt.date | _dt.datetime):
        return f"{value} is a date, which JSON cannot hold; quote it ('{value}') if you mean the text"
    if isinstance(value, bytes):
        return "!!binary data, which JSON cannot hold; give a string"
    return f"a {type(value).__name__} ({value!r:.60}), which JSON cannot hold; give a list, mapping or scalar"
