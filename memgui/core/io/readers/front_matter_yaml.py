"""YAML front matter read as data, within bounds.

YAML is read with the safe loader (libyaml's when it is there): tags never build Python
objects, so nothing in a note runs. What a note can still do is make its reader work without
end: an alias repeats what its anchor names, so nine levels of nine aliases (372 bytes) name
9^9 strings; an alias inside what its own anchor names (`a: &a [*a]`) is endless; and deep
nesting exhausts the stack of whatever walks the value later. So the node graph YAML composes
(where an alias is one shared node) is measured before any value is built: the characters and
values it holds once its aliases are expanded, how deep it nests, and whether it refers to
itself. A front matter past a bound is refused (`FrontMatterRefused`), naming the bound.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_FRONT_MATTER_CHARS = 256 * 1024  # characters, before and after expanding the aliases
MAX_FRONT_MATTER_DEPTH = 32  # nested lists and mappings (Obsidian properties nest 1-2 deep)
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FrontMatterRefused(ValueError):
    """Front matter past a bound: `reason` says which; `line` is 1-based in the block."""

    def __init__(self, reason: str, line: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


def load_front_matter(text: str) -> Any:
    """The value of a YAML front-matter block; raises FrontMatterRefused or yaml.YAMLError."""
    if len(text) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterRefused(
            f"front matter is {len(text):,} characters; at most {MAX_FRONT_MATTER_CHARS:,} are read"
        )
    loader = SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise _too_deep(0) from None
        if node is None:
            return None
        _Measure().size(node, 1)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _too_deep(line: int) -> FrontMatterRefused:
    return FrontMatterRefused(
        f"front matter is nested more than {MAX_FRONT_MATTER_DEPTH} deep", line
    )


class _Measure:
    """Sizes of nodes as expanded, each shared node measured once (a bomb costs its text)."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[int, int]] = {}  # id(node) -> (size, height)
        self.open: set[int] = set()  # nodes being measured: met again, the graph loops

    def size(self, node: Node, depth: int) -> tuple[int, int]:
        """(characters and values it expands to, levels below it); raises when past a bound."""
        line = node.start_mark.line + 1 if node.start_mark is not None else 0
        key = id(node)
        known = self.known.get(key)
        if known is not None:
            if depth + known[1] > MAX_FRONT_MATTER_DEPTH:
                raise _too_deep(line)
            return known
        if key in self.open:
            raise FrontMatterRefused(
                f"front matter refers to itself: the value an anchor names on line {line} "
                "holds an alias of it",
                line,
            )
        if depth > MAX_FRONT_MATTER_DEPTH:
            raise _too_deep(line)
        if isinstance(node, ScalarNode):
            result = (len(node.value) + 1, 0)
        else:
            children: list[Node] = []
            if isinstance(node, SequenceNode):
                children = node.value
            elif isinstance(node, MappingNode):
                children = [part for pair in node.value for part in pair]
            self.open.add(key)
            total, height = 1, 0
            for child in children:
                child_size, child_height = self.size(child, depth + 1)
                total += child_size
                height = max(height, child_height + 1)
                if total > MAX_FRONT_MATTER_CHARS:
                    raise FrontMatterRefused(
                        f"front matter holds more than {MAX_FRONT_MATTER_CHARS:,} characters "
                        "once its aliases are expanded",
                        line,
                    )
            self.open.discard(key)
            result = (total, height)
        self.known[key] = result
        return result
