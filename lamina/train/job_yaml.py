"""Reading a job file's YAML, safely: a SafeLoader that refuses duplicate keys and reads
`1e-3` as a number, limits on nesting, aliases and expanded size that a hostile file hits
before anything is built; and `--set key.path=value` overrides."""

from __future__ import annotations

import functools
import re
from typing import Any

from lamina.schema import ConfigError

# What a job file may hold: deeper nesting or more aliases than any job needs is refused
# before anything is built, and the values a file expands to (aliases repeat what they
# name) are counted up to a bound, so a hostile file costs milliseconds and no memory.
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_VALUES = 100_000


def read_yaml(text: str) -> Any:
    """Parse YAML safely, reading `1e-3` as a float. PyYAML follows YAML 1.1, where a float
    needs a dot (`1.0e-3`) and `1e-3` is the string '1e-3'; YAML 1.2, and every user
    writing a learning rate, mean the number.

    Raises:
        ConfigError: a key given twice in one mapping (both lines named), nesting deeper
            than MAX_DEPTH, more than MAX_ALIASES aliases, or more than MAX_VALUES values
            once aliases are expanded.
        yaml.YAMLError: text that is not YAML.
    """
    import yaml

    _check_shape(yaml.parse(text, Loader=_loader()))
    value = yaml.load(text, Loader=_loader())  # safe: the loader is a SafeLoader
    _check_expanded_size(value)
    return value


def _check_shape(events: Any) -> None:
    """Nesting depth and alias count, read off the parser's events (nothing is built)."""
    import yaml

    depth = aliases = 0
    for event in events:
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"line {event.start_mark.line + 1}: nested more than "
                                  f"{MAX_DEPTH} levels deep; no job needs that")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ConfigError(f"line {event.start_mark.line + 1}: more than "
                                  f"{MAX_ALIASES} YAML aliases (*name); write the values out")


def _check_expanded_size(value: Any) -> None:
    """Refuse a file whose aliases expand to more than MAX_VALUES values (a "billion
    laughs"), counting each value as often as it is reached, with an early stop."""
    count, todo = 0, [value]
    while todo:
        item = todo.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(f"the job expands to more than {MAX_VALUES} values (YAML "
                              "aliases that repeat one another?); write it out plainly")
        if isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)


@functools.cache
def _loader() -> type:
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            # PyYAML keeps the last of two equal keys, silently: a second `trainer:` would
            # replace the first whole.
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key, line = self.construct_object(key_node), key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(f"line {line}: duplicate key {key!r} (first at line "
                                      f"{seen[key]}); give each key once")
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    exponent = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789."))
    return Loader


def apply_override(config: dict[str, Any], item: str) -> None:
    """Set `a.b.c=value` in a nested config; the value is parsed as YAML (3, 0.1, true, [1, 2])."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {item!r}: expected key.path=value")
    parts = key.split(".")
    node: Any = config
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list) and not (part.isdigit() and int(part) < len(node)):
            raise ConfigError(f"--set {key}: {'.'.join(parts[:i]) or 'the job'} is a list of "
                              f"{len(node)} items, numbered 0 to {len(node) - 1}; got {part!r}")
        nxt = node[int(part)] if isinstance(node, list) else node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, (dict, list)):
            raise ConfigError(f"--set {key}: {'.'.join(parts[:i + 1])} is not a section")
        node = nxt
    last = parts[-1]
    value = read_yaml(text)
    if isinstance(node, list):
        if not (last.isdigit() and int(last) < len(node)):
            raise ConfigError(f"--set {key}: {'.'.join(parts[:-1])} is a list of {len(node)} "
                              f"items, numbered 0 to {len(node) - 1}; got {last!r}")
        node[int(last)] = value
    else:
        node[last] = value
