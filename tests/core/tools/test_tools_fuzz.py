"""Property: no argument a client can send makes a tool fail with an internal error.

Every tool of both profiles gets arbitrary JSON: the declared fields with values of every
kind (huge integers, floats, lone surrogates, nested objects, ids that exist and ids that do
not) and undeclared fields. A call either answers — a result the transports can encode as
JSON — or refuses with `InvalidArgument` (a `ParameterError` for the wrong shape) or, for a
stale `expect_version`, `Conflict`, each with a message that encodes as JSON too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument
from memgui.core.tools import ToolContext, call, profile

pytestmark = pytest.mark.slow  # a fuzz suite

PROFILES = [profile("agent-memory"), profile("agentos", rehydrate=True)]
# The same examples every run (no example database, no random seed), so the suite is
# repeatable; MEMGUI_FUZZ_EXAMPLES=2000 explores further, with fresh random inputs.
EXAMPLES = int(os.environ.get("MEMGUI_FUZZ_EXAMPLES", "60"))
FIXED = "MEMGUI_FUZZ_EXAMPLES" not in os.environ
TOOL_CASES = [(p, name) for p in PROFILES for name in p.tools]

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "\ud800",
            "a\udfffb",
            "x" * 300,
            "DECISION",
            "relates_to",
            '"',
            "a AND",
            "NEAR(",
            "*",
            "mt_missing",
            "42",
        ]
    ),  # fmt: skip
)
integers = st.one_of(
    st.integers(-3, 300),
    st.sampled_from([2**63 - 1, -(2**63), 2**64, 10**40, 3_155_760_000, 3_155_760_001]),
)
scalars = st.one_of(st.none(), st.booleans(), integers, st.floats(allow_nan=False), texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def fuzz_brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Brain, list[str]]]:
    brain = Brain.open(tmp_path_factory.mktemp("fuzz") / "brain.sqlite", actor="fuzz")
    ids = [brain.add(f"seeded memory {i} about widgets", category="TODO").id for i in range(4)]
    brain.link(ids[0], ids[1], "relates_to")
    yield brain, ids
    brain.close()


def arguments(tool: Any, ids: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Declared fields with plausible or arbitrary values, plus undeclared ones."""
    existing = st.sampled_from(ids)
    values = {
        p.name: st.one_of(json_values, existing, st.lists(existing | texts, max_size=4))
        for p in tool.params
    }
    declared = st.fixed_dictionaries({}, optional=values)
    extra = st.dictionaries(texts, json_values, max_size=2)
    return st.one_of(declared, st.tuples(declared, extra).map(lambda pair: {**pair[1], **pair[0]}))


@pytest.mark.parametrize(
    ("tools", "name"), TOOL_CASES, ids=[f"{p.name}:{n}" for p, n in TOOL_CASES]
)
def test_no_input_makes_an_internal_error(fuzz_brain, tools, name) -> None:
    brain, ids = fuzz_brain
    ctx = ToolContext(brain, "mcp:fuzz")

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=FIXED,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(args=arguments(tools.tools[name], ids))
    def check(args: dict[str, Any]) -> None:
        try:
            result = call(ctx, tools, name, args)
        except (InvalidArgument, Conflict) as refused:
            orjson.dumps(str(refused))  # the message a transport sends
            return
        orjson.dumps(result.data)
        if result.text is not None:
            orjson.dumps(result.text)

    check()


@given(arguments=json_values)
@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=FIXED)
def test_arguments_that_are_no_object_are_refused_by_shape(arguments: Any) -> None:
    from memgui.core.tools.params import read_params

    tool = PROFILES[0].tools["memory_store"]
    if isinstance(arguments, dict) or arguments is None:
        return
    with pytest.raises(InvalidArgument, match="failed to deserialize parameters"):
        read_params(tool.params, arguments)
