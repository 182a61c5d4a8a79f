"""Where the graph view draws each node: a seed at once, then forces, never moving what is placed.

`seed` puts every node not yet placed beside a placed neighbour (its children spread evenly
round it, the first angle drawn from a hash of its id), or on a ring outside the drawing when
nothing it touches is placed: O(n), a few milliseconds for 2,000 nodes, so the first paint
never waits for forces. `refine` then runs Fruchterman–Reingold forces on the nodes that were
not placed before (placed nodes never move: an expand or another program's write adds nodes
without moving what the person has seen). Repulsion acts between nodes closer than two ideal
edge lengths, found through a grid (the grid variant of Fruchterman and Reingold's paper), so
an iteration costs O(n · neighbours) instead of O(n²): 20,000 nodes in ~50 ms on numpy.

Everything is deterministic: nodes are taken in id order, angles come from CRC-32 of the ids
and numpy's arithmetic is the same each run, so the same graph gives the same positions.
"""

from __future__ import annotations

import math
import time
import zlib
from collections import defaultdict, deque
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memgui.core.progress import Progress

EDGE_LENGTH = 90.0  # the ideal distance of two linked nodes, in scene units
ITERATIONS = 60
POST_EVERY_S = 1 / 30  # positions handed out at most 30 times a second
REPULSION_SLICE = 2_000  # movers pushed at a time (each numpy call holds the GIL)
GRAVITY = 0.02  # a weak pull of free nodes towards their placed neighbours' middle

Point = tuple[float, float]


@dataclass(frozen=True)
class LayoutProgress(Progress):
    """A step of `refine`: the positions so far, in the order of `ids`."""

    ids: tuple[str, ...] = ()
    xy: np.ndarray | None = None


def _angle(text: str) -> float:
    return (zlib.crc32(text.encode("utf-8", "surrogatepass")) % 3600) / 3600 * 2 * math.pi


def seed(
    ids: Iterable[str],
    edges: Iterable[tuple[str, str]],
    placed: Mapping[str, Point],
    centre: str | None = None,
    edge_length: float = EDGE_LENGTH,
) -> dict[str, Point]:
    """A position for every id: placed ones as given; with nothing placed, a radial tree
    round `centre` (each subtree a wedge as wide as its size, each ring long enough for its
    nodes); else each new node in a fan beside its placed neighbour, facing away from that
    neighbour's own neighbours."""
    order = sorted(set(ids))
    neighbours: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        if a != b:
            neighbours[a].append(b)
            neighbours[b].append(a)
    for lst in neighbours.values():
        lst.sort()
    out: dict[str, Point] = {i: placed[i] for i in order if i in placed}
    if len(out) == len(order):
        return out
    if not out:
        known = set(order)
        root = centre if centre in known else max(order, key=lambda i: (len(neighbours[i]), i))
        out.update(_radial(root, neighbours, edge_length))
    else:
        _fans(out, neighbours, edge_length)
    _ring(order, out, edge_length)
    return out


def _tree(root: str, neighbours: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Children of each node in a breadth-first tree from `root`."""
    children: dict[str, list[str]] = defaultdict(list)
    seen = {root}
    queue = deque([root])
    while queue:
        parent = queue.popleft()
        for child in neighbours.get(parent, ()):
            if child not in seen:
                seen.add(child)
                children[parent].append(child)
                queue.append(child)
    return children


def _radial(root: str, neighbours: Mapping[str, list[str]], length: float) -> dict[str, Point]:
    children = _tree(root, neighbours)
    levels: list[list[str]] = [[root]]
    while True:
        nxt = [c for p in levels[-1] for c in children.get(p, ())]
        if not nxt:
            break
        levels.append(nxt)
    size: dict[str, int] = {}
    for level in reversed(levels):
        for node in level:
            size[node] = 1 + sum(size[c] for c in children.get(node, ()))
    radius = [0.0]
    for level in levels[1:]:  # a ring holds its nodes at least one edge length apart
        radius.append(max(radius[-1] + length, len(level) * length / (2 * math.pi)))
    out: dict[str, Point] = {root: (0.0, 0.0)}
    wedge: dict[str, tuple[float, float]] = {root: (_angle(root), 2 * math.pi)}
    for depth, level in enumerate(levels):
        for node in level:
            start, width = wedge[node]
            kids = children.get(node, ())
            total = sum(size[c] for c in kids)
            at = start
            for kid in kids:
                share = width * size[kid] / total
                wedge[kid] = (at, share)
                angle = at + share / 2
                r = radius[depth + 1]
                out[kid] = (r * math.cos(angle), r * math.sin(angle))
                at += share
    return out


def _fans(out: dict[str, Point], neighbours: Mapping[str, list[str]], length: float) -> None:
    """Place, breadth-first from the placed nodes, each unplaced neighbour in a fan."""
    queue = deque(sorted(out))
    while queue:
        parent = queue.popleft()
        kids = [c for c in neighbours.get(parent, ()) if c not in out]
        if not kids:
            continue
        px, py = out[parent]
        around = [out[n] for n in neighbours.get(parent, ()) if n in out]
        if around:
            mx = sum(p[0] for p in around) / len(around)
            my = sum(p[1] for p in around) / len(around)
            facing = math.atan2(py - my, px - mx) if (mx, my) != (px, py) else _angle(parent)
            spread = math.pi
        else:
            facing, spread = _angle(parent), 2 * math.pi
        ring, placed_on_ring = 1, 0
        for kid in kids:
            r = length * ring
            room = max(1, int(spread * r / length))
            if placed_on_ring >= room:
                ring, placed_on_ring = ring + 1, 0
                r = length * ring
                room = max(1, int(spread * r / length))
            offset = (placed_on_ring + 0.5) / room - 0.5
            angle = facing + offset * spread
            out[kid] = (px + r * math.cos(angle), py + r * math.sin(angle))
            placed_on_ring += 1
            queue.append(kid)


def _ring(order: list[str], out: dict[str, Point], length: float) -> None:
    """Nodes joined to nothing placed: a spiral round the drawing, one edge length apart."""
    loose = [i for i in order if i not in out]
    if not loose:
        return
    xs = [p[0] for p in out.values()] or [0.0]
    ys = [p[1] for p in out.values()] or [0.0]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    reach = max(max(xs) - min(xs), max(ys) - min(ys)) / 2 + 2 * length
    for k, node in enumerate(loose):
        angle = k * 2.399963  # the golden angle: each next one where the spiral has room
        r = math.sqrt(reach * reach + k * length * length * 1.5)
        out[node] = (cx + r * math.cos(angle), cy + r * math.sin(angle))


def refine(
    ids: Sequence[str],
    edges: Iterable[tuple[str, str]],
    start: Mapping[str, Point],
    fixed: Iterable[str],
    iterations: int = ITERATIONS,
    edge_length: float = EDGE_LENGTH,
    post_every_s: float = POST_EVERY_S,
) -> Generator[Progress, None, dict[str, Point]]:
    """Forces on the nodes not in `fixed`; yields `LayoutProgress` at most every
    `post_every_s`, returns the final positions (a dict by id)."""
    # One tuple for every step: the window maps these ids to its rows once per layout.
    order = tuple(sorted(set(ids)))
    index = {node: k for k, node in enumerate(order)}
    xy = np.array([start[i] for i in order], dtype=np.float64).reshape(-1, 2)
    free = np.ones(len(order), dtype=bool)
    for node in fixed:
        k = index.get(node)
        if k is not None:
            free[k] = False
    # Sorted and unique in numpy (a Python sort of 40,000 pairs held the GIL ~40 ms).
    pairs = [(index[a], index[b]) for a, b in edges if a in index and b in index and a != b]
    width = max(1, len(order))
    keyed = np.unique(np.array(pairs, dtype=np.int64).reshape(-1, 2) @ [width, 1])
    src, dst = keyed // width, keyed % width
    posted = time.monotonic()
    if free.any() and len(order) > 1:
        anchor = _anchors(xy, free, src, dst)
        for step in range(iterations):
            temperature = edge_length * (1.0 - step / iterations) + edge_length / 20
            xy = _step(xy, free, src, dst, anchor, edge_length, temperature)
            now = time.monotonic()
            if now - posted >= post_every_s:
                posted = now
                yield LayoutProgress(step + 1, iterations, "laying out", order, xy.copy())
    yield LayoutProgress(iterations, iterations, "laid out", order, xy.copy())
    return {node: (float(xy[k, 0]), float(xy[k, 1])) for k, node in enumerate(order)}


def _anchors(xy: np.ndarray, free: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Where gravity pulls each free node: the middle of its fixed neighbours, else its seed."""
    anchor = xy.copy()
    if len(src):
        total = np.zeros_like(xy)
        count = np.zeros(len(xy))
        for a, b in ((src, dst), (dst, src)):
            mask = free[a] & ~free[b]
            np.add.at(total, a[mask], xy[b[mask]])
            np.add.at(count, a[mask], 1)
        has = count > 0
        anchor[has] = total[has] / count[has, None]
    return anchor


def _step(
    xy: np.ndarray,
    free: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    anchor: np.ndarray,
    length: float,
    temperature: float,
) -> np.ndarray:
    n = len(xy)
    force = _repulsion(xy, free, length)
    if len(src):
        delta = xy[dst] - xy[src]
        dist = np.sqrt((delta**2).sum(axis=1)) + 1e-9
        pull = delta * (dist / length)[:, None]  # |f| = d² / k
        fx = np.bincount(src, pull[:, 0], n) - np.bincount(dst, pull[:, 0], n)
        fy = np.bincount(src, pull[:, 1], n) - np.bincount(dst, pull[:, 1], n)
        force += np.stack([fx, fy], axis=1)
    force += (anchor - xy) * GRAVITY
    size = np.sqrt((force**2).sum(axis=1)) + 1e-9
    move = force * (np.minimum(size, temperature) / size)[:, None]
    out = xy.copy()
    out[free] += move[free]
    return out


def _repulsion(xy: np.ndarray, free: np.ndarray, length: float) -> np.ndarray:
    """|f| = k² / d between a free node and every node closer than 2k (the grid's reach)."""
    n = len(xy)
    cell = 2 * length
    cells = np.floor(xy / cell).astype(np.int64)
    span = int(cells[:, 1].max() - cells[:, 1].min()) + 3
    keys = (cells[:, 0] - cells[:, 0].min() + 1) * span + (cells[:, 1] - cells[:, 1].min() + 1)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    movers = order[free[order]]  # in cell order: the searches below then run in order too
    force = np.zeros((n, 2))
    # A slice of the movers at a time: a numpy call holds the GIL for its whole length, and
    # one over every pair of a 20,000-node layout held the GUI thread for ~100 ms. Each
    # mover's force comes from its own slice alone: the sums are the same.
    for first in range(0, len(movers), REPULSION_SLICE):
        _push(
            xy,
            keys,
            order,
            sorted_keys,
            movers[first : first + REPULSION_SLICE],
            span,
            cell,
            length,
            force,
        )
    return force


def _push(
    xy: np.ndarray,
    keys: np.ndarray,
    order: np.ndarray,
    sorted_keys: np.ndarray,
    movers: np.ndarray,
    span: int,
    cell: float,
    length: float,
    force: np.ndarray,
) -> None:
    """Add to `force` the push on each of `movers` from the nodes of its and the next cells."""
    n = len(xy)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            wanted = keys[movers] + dx * span + dy
            lo = np.searchsorted(sorted_keys, wanted, side="left")
            hi = np.searchsorted(sorted_keys, wanted, side="right")
            counts = hi - lo
            total = int(counts.sum())
            if not total:
                continue
            i = np.repeat(movers, counts)
            starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
            j = order[starts + np.arange(total)]
            keep = i != j
            i, j = i[keep], j[keep]
            delta = xy[i] - xy[j]
            dist2 = (delta**2).sum(axis=1)
            near = dist2 < cell * cell
            i, delta, dist2 = i[near], delta[near], dist2[near]
            # Two nodes on one spot: pushed apart along a direction from their indexes.
            same = dist2 < 1e-6
            if same.any():
                angle = (i[same] * 2.399963) % (2 * math.pi)
                delta[same] = np.stack([np.cos(angle), np.sin(angle)], axis=1) * 0.1
                dist2[same] = 0.01
            push = delta * (length * length / dist2)[:, None]
            force[:, 0] += np.bincount(i, push[:, 0], n)
            force[:, 1] += np.bincount(i, push[:, 1], n)


def lay_out(
    ids: Sequence[str],
    edges: Sequence[tuple[str, str]],
    placed: Mapping[str, Point],
    centre: str | None = None,
    iterations: int = ITERATIONS,
) -> Generator[Progress, None, dict[str, Point]]:
    """`seed`, then `refine` of what was not placed: a job whose result is every position."""
    start = seed(ids, edges, placed, centre)
    return (yield from refine(ids, edges, start, placed.keys(), iterations))
