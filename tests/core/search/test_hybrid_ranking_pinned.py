"""The order and scores hybrid and semantic search give on one fixed brain, pinned: a change
to how the vectors are scored, cut or fused (for speed) must give exactly these answers.

The brain: 240 memories of words drawn by a seeded generator, each with its own strength,
and seeded random unit vectors written through the backfill's own write (`write_checked`);
the queries are embedded by the test Ollama server over HTTP. Ids are random, so the
answers are named by their text.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import hybrid, vector_cache
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.semantic import SemanticSearch
from tests.support import ollama_fixture
from tests.support.ollama_server import FakeOllama

ollama_server = ollama_fixture.ollama_server

MODEL = "nomic-embed-text"
WORDS = (
    "harbour crane garage visit engine river stone lamp garden letter window bridge "
    "winter market kettle orchard ferry candle ladder meadow"
).split()


@pytest.fixture
def fixed_brain(tmp_path: Path, ollama_server: FakeOllama) -> Iterator[Brain]:
    brain = Brain.open(tmp_path / "fixed.sqlite")
    pick = random.Random(20)
    with brain.batch():
        for i in range(240):
            words = " ".join(pick.choice(WORDS) for _ in range(pick.randint(3, 7)))
            brain.add(f"{words} {i}", strength=round(0.3 + 0.7 * (i * 37 % 240) / 240, 4))
    dimensions = len(OllamaEmbedder(ollama_server.url, model=MODEL).embed(["probe"])[0])
    rows = list(
        brain.db.conn.execute(
            "SELECT rowid, content FROM memory_traces WHERE brain_id = ? ORDER BY content",
            (brain.brain_id,),
        )
    )
    vectors = np.random.default_rng(20).normal(size=(len(rows), dimensions))
    hybrid.write_checked(
        brain.db.conn,
        brain.brain_id,
        MODEL,
        [(rowid, content) for rowid, content in rows],
        [list(v / np.linalg.norm(v)) for v in vectors],
        transaction=lambda: brain.write("embed", kind="embed", actor="sweep"),
    )
    brain.semantic = SemanticSearch(OllamaEmbedder(ollama_server.url, model=MODEL))
    yield brain
    brain.close()
    vector_cache.forget_cache()


def answers(brain: Brain, query: str, mode: str, flt: TraceFilter | None = None) -> list[str]:
    found = brain.search(query, flt or TraceFilter(), limit=8, mode=mode, record_recall=False)
    assert found.search_mode == mode
    return [t.content for t in found.traces]


def test_hybrid_and_semantic_answers_on_a_fixed_brain_are_pinned(fixed_brain: Brain) -> None:
    got = {
        (query, mode): answers(fixed_brain, query, mode)
        for query in ("harbour crane", "winter garden lamp", "ferry")
        for mode in ("hybrid", "semantic")
    }
    assert got == PINNED


PINNED = {
    ("ferry", "hybrid"): [
        "ferry winter orchard meadow 207",
        "ferry ferry harbour river 17",
        "ferry garden lamp crane market lamp 101",
        "ferry meadow candle visit letter 217",
        "garage ferry letter stone window lamp kettle 188",
        "ferry ferry crane visit garden market ladder 58",
        "ferry ferry orchard river engine stone candle 77",
        "ferry engine ferry garage river 57",
    ],
    ("ferry", "semantic"): [
        "stone crane meadow ladder harbour 184",
        "garage ferry letter stone window lamp kettle 188",
        "harbour letter orchard kettle garden 163",
        "engine crane stone visit 132",
        "garage meadow bridge 128",
        "lamp garage garden crane letter 166",
        "garage stone stone stone orchard kettle 103",
        "ferry meadow candle visit letter 217",
    ],
    ("harbour crane", "hybrid"): [
        "orchard kettle letter crane harbour 82",
        "harbour crane stone 29",
        "stone crane meadow ladder harbour 184",
        "harbour garden crane 25",
        "kettle orchard harbour letter meadow 96",
        "winter winter garden harbour kettle garage ladder 32",
        "lamp market harbour candle crane garden 181",
        "harbour garage orchard ferry bridge 175",
    ],
    ("harbour crane", "semantic"): [
        "kettle orchard harbour letter meadow 96",
        "stone bridge winter stone candle ferry letter 42",
        "harbour letter orchard 146",
        "engine market bridge ferry river visit bridge 199",
        "orchard market market crane river kettle visit 208",
        "ferry ferry harbour river 17",
        "orchard kettle letter crane harbour 82",
        "winter winter garden harbour kettle garage ladder 32",
    ],
    ("winter garden lamp", "hybrid"): [
        "lamp engine winter visit kettle garden 116",
        "garage visit candle ferry crane lamp 227",
        "ferry letter bridge kettle ladder 200",
        "kettle garage ferry 64",
        "market winter harbour 160",
        "letter ladder crane visit ladder 174",
        "bridge letter kettle crane engine meadow winter 31",
        "meadow stone winter 69",
    ],
    ("winter garden lamp", "semantic"): [
        "garage lamp garden kettle letter 165",
        "garage kettle market crane 68",
        "ferry letter bridge kettle ladder 200",
        "market winter harbour 160",
        "kettle garage ferry 64",
        "meadow stone winter 69",
        "lamp engine harbour kettle visit harbour engine 196",
        "lamp engine winter visit kettle garden 116",
    ],
}
