"""`memgui serve-rest` as a real uvicorn process, driven with httpx on a free loopback port.

Every route of seed 001 and every status code it names (200, 201, 400, 404, 415, 422), the
`{"error": …}` bodies, malformed JSON, a wrong content type, path ids like `abc`, pages with a
cursor, and memgui's own 409 for a stale `expect_version`.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import httpx
import pytest

from memgui.core.brain import Brain
from tests.support.servers import RestServer, memgui_argv, rest_server, server_env

pytestmark = pytest.mark.slow
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RestServer, Path]]:
    folder = tmp_path_factory.mktemp("rest")
    brain = folder / "brain.sqlite"
    args = ("--brain", str(brain), "serve-rest", "--addr", "127.0.0.1:0")
    with rest_server(server_env(folder), *args) as server:
        yield server, brain


@pytest.fixture
def api(rest: tuple[RestServer, Path]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=rest[0].url, timeout=60) as client:
        yield client


def store(api: httpx.Client, content: str, type_: str = "PATTERN", **more: object) -> str:
    answer = api.post("/api/memories", json={"content": content, "type": type_, **more})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def test_store_routes_and_the_v001_body_rejections(api: httpx.Client) -> None:
    trace_id = store(api, "Row level security guards the database", tags=["db"])
    assert trace_id.startswith("mt_")
    bad_type = api.post("/api/memories", json={"content": "x", "type": "pattern"})
    assert bad_type.status_code == 400
    assert bad_type.json()["error"] == (
        "invalid memory type 'pattern' (expected one of "
        "DECISION, PATTERN, ERROR, TODO, ARCHITECTURE, CONSTRAINT)"
    )
    ttl = api.post("/api/memories", json={"content": "x", "type": "TODO", "ttl_secs": -1})
    assert ttl.status_code == 400
    assert ttl.json()["error"] == (
        "invalid argument: ttl_secs must be between 1 and 3155760000 (got -1)"
    )
    no_type = api.post("/api/memories", content=b'{"content": "x", "type": "TODO"}')
    assert no_type.status_code == 415 and "Content-Type: application/json" in no_type.text
    broken = api.post("/api/memories", content=b'{"content": "x"', headers=JSON)
    assert broken.status_code == 400 and broken.text.startswith("Failed to parse the request body")
    missing = api.post("/api/memories", json={"type": "TODO"})
    assert missing.status_code == 422 and "missing field `content`" in missing.text
    wrong = api.post("/api/memories", json={"content": 5, "type": "TODO"})
    assert wrong.status_code == 422 and "`content`" in wrong.text
    assert api.post("/api/memories", json=[1, 2]).status_code == 422


def test_list_pages_filters_and_query_rejections(api: httpx.Client) -> None:
    made = [store(api, f"paged memory number {i}", "ERROR", scope="paging") for i in range(5)]
    pages, cursor = [], None
    while True:
        params = {"scope": "paging", "limit": 2, **({"cursor": cursor} if cursor else {})}
        answer = api.get("/api/memories", params=params)
        assert answer.status_code == 200
        pages.append([m["id"] for m in answer.json()])
        cursor = answer.headers.get("x-next-cursor")
        if cursor is None:
            break
        assert answer.headers["link"].endswith('rel="next"')
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [i for page in pages for i in page] == made[::-1]  # newest first, each once
    typed = api.get("/api/memories", params={"type": "ERROR", "scope": "paging"}).json()
    assert {m["id"] for m in typed} == set(made)
    for query, text in (
        ("limit=abc", "invalid type for `limit`"),
        ("expand_links=1", "invalid type for `expand_links`"),
        ("limit=0", "limit must be between 1 and 200 (got 0)"),
        ("limit=201", "limit must be between 1 and 200 (got 201)"),
        ("expand_links=true", "limit is required when expand_links is true"),
        ("cursor=nonsense", "cursor is not a cursor"),
        ("type=todo", "invalid memory type 'todo'"),
    ):
        answer = api.get(f"/api/memories?{query}")
        assert answer.status_code == 400, query
        assert text in answer.json()["error"], (query, answer.text)


def test_search_route(api: httpx.Client) -> None:
    trace_id = store(api, "The sqlite-vec extension stores vectors", "ARCHITECTURE", tags=["vec"])
    found = api.post("/api/search", json={"query": "sqlite-vec", "tag": "vec"})
    assert found.status_code == 200
    assert found.json()["search_mode"] == "keyword"
    assert [r["id"] for r in found.json()["results"]] == [trace_id]
    assert api.post("/api/search", json={"query": '"'}).status_code == 200  # never refused
    assert api.post("/api/search", json={"query": "x", "limit": 0}).status_code == 400
    assert api.post("/api/search", content=b'{"query": ', headers=JSON).status_code == 400
    assert api.post("/api/search", content=b'{"query": "x"}').status_code == 415
    assert api.post("/api/search", json={"limit": 3}).status_code == 422


def test_update_route(api: httpx.Client) -> None:
    trace_id = store(api, "We deploy on Tuesdays", "DECISION", tags=["deploy"], ttl_secs=60)
    patched = api.patch(f"/api/memories/{trace_id}", json={"tags": ["maven"], "ttl_secs": None})
    assert patched.status_code == 200
    body = patched.json()
    assert body["tags"] == ["maven"] and body["embedding_status"] == 0
    assert body["content"] == "We deploy on Tuesdays" and body["version"] == 2
    unknown = api.patch("/api/memories/abc", json={"content": "x"})
    assert unknown.status_code == 404
    assert unknown.json() == {"id": "abc", "updated": False, "reason": "not_found"}
    for body_bytes, headers, text in (
        (b'{"ttl_sec": 5}', JSON, "unknown field `ttl_sec`"),
        (b'{"content": null}', JSON, "content must not be null or empty"),
        (b"{}", JSON, "at least one of content, tags, scope, ttl_secs"),
        (b'{"tags": ', JSON, "Failed to parse the request body as JSON"),
        (b'{"tags": []}', {}, "Content-Type: application/json"),
        (b'{"id": "other", "tags": []}', JSON, "unknown field `id`"),
        (b'{"tags": "x"}', JSON, "invalid type for `tags`"),
        (b'{"ttl_secs": 0}', JSON, "ttl_secs must be between 1 and 3155760000 (got 0)"),
    ):
        answer = api.patch(f"/api/memories/{trace_id}", content=body_bytes, headers=headers)
        assert answer.status_code == 400, (body_bytes, answer.text)
        assert text in answer.json()["error"], (body_bytes, answer.text)
    stale = api.patch(f"/api/memories/{trace_id}", json={"tags": [], "expect_version": 1})
    assert stale.status_code == 409 and trace_id in stale.json()["error"]
    blank = api.patch("/api/memories/%20", json={"tags": []})
    assert blank.status_code == 400 and "id must be a non-empty trace id" in blank.json()["error"]


def test_forget_and_link_routes(api: httpx.Client) -> None:
    old, new = store(api, "Old decision", "DECISION"), store(api, "New decision", "DECISION")
    edge = {"from_id": new, "to_id": old, "kind": "supersedes"}
    for _ in range(2):  # a duplicate link is a 200 too
        linked = api.post("/api/links", json=edge)
        assert linked.status_code == 200 and linked.json() == dict(edge, linked=True)
    missing = api.post("/api/links", json=dict(edge, to_id=42))
    assert missing.status_code == 404
    assert missing.json() == dict(edge, to_id=42, linked=False, reason="not_found", missing_id=42)
    for body, text in (
        (dict(edge, to_id=new), "from_id and to_id must differ"),
        (dict(edge, kind="blocks"), "kind must be one of relates_to, supersedes, caused_by"),
        ({"from_id": new, "to_id": old}, "missing field `kind`"),
    ):
        answer = api.post("/api/links", json=body)
        assert answer.status_code == 400 and text in answer.json()["error"], answer.text
    assert api.post("/api/links", content=b"{", headers=JSON).status_code == 400
    assert api.post("/api/links", content=b"{}").json()["error"].startswith("Expected request")
    unlinked = api.delete(f"/api/links/{new}/{old}/supersedes")
    assert unlinked.status_code == 200 and unlinked.json() == dict(edge, unlinked=True)
    again = api.delete(f"/api/links/{new}/{old}/supersedes")
    assert again.status_code == 404
    assert again.json() == dict(edge, unlinked=False, reason="not_found")
    assert api.delete(f"/api/links/{new}/{old}/blocks").status_code == 400
    forgotten = api.delete(f"/api/memories/{old}")
    assert forgotten.status_code == 200 and forgotten.json() == {"id": old, "deleted": True}
    gone = api.delete(f"/api/memories/{old}")
    assert gone.status_code == 404
    assert gone.json() == {"id": old, "deleted": False, "reason": "not_found"}
    assert api.delete("/api/memories/abc").json() == {
        "id": "abc", "deleted": False, "reason": "not_found"}  # fmt: skip


def test_health_unknown_routes_and_the_journal(
    api: httpx.Client, rest: tuple[RestServer, Path]
) -> None:
    health = api.get("/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "embedder": "unreachable"}
    nowhere = api.get("/api/nothing")
    assert nowhere.status_code == 404 and "no route" in nowhere.json()["error"]
    assert api.put("/api/memories").status_code == 405
    store(api, "journaled as rest")
    with Brain.open(rest[1], create=False) as b:
        assert {entry.actor for entry in b.journal_since(0)} == {"rest"}


def wait_until(probe, what: str, timeout: float = 60.0):  # noqa: ANN001, ANN201
    """The first true answer of `probe`, asked until `timeout` (a state, never a nap)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = probe()
        if answer:
            return answer
        time.sleep(0.05)  # between two looks at the state
    raise AssertionError(f"timed out waiting for {what}")


def hybrid_hit(client: httpx.Client, query: str) -> dict | None:
    found = client.post("/api/search", json={"query": query}).json()
    return found if found["search_mode"] == "hybrid" and found["results"] else None


def test_agent_memory_variables_and_a_live_ollama(tmp_path: Path, ollama_server) -> None:
    brain = tmp_path / "env.sqlite"
    env = server_env(
        tmp_path, AGENT_MEMORY_DB=str(brain), AGENT_MEMORY_OLLAMA_URL=ollama_server.url
    )
    del env["MEMGUI_OLLAMA_URL"]
    with (
        rest_server(env, "serve-rest", "--addr", "127.0.0.1:0") as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        assert client.get("/health").json() == {"status": "ok", "embedder": "ready"}
        trace_id = store(client, "The car broke down on a cold morning")
        patched = client.patch(f"/api/memories/{trace_id}", json={"content": "The engine failed"})
        assert patched.json()["embedding_status"] == 0  # embedded just after the answer
        # Found by meaning (no shared word) once the background backfill embedded it.
        found = wait_until(lambda: hybrid_hit(client, "motor breakdown"), "an embedding")
        assert [r["id"] for r in found["results"]] == [trace_id]
        assert "The engine failed" in ollama_server.embedded_texts  # the new text, not the old
    assert brain.exists()


def test_a_storage_failure_is_a_generic_500_and_its_detail_is_logged(tmp_path: Path) -> None:
    brain = tmp_path / "brain.sqlite"
    args = ("--brain", str(brain), "serve-rest", "--addr", "127.0.0.1:0")
    with (
        rest_server(server_env(tmp_path), *args) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        store(client, "before the damage")
        conn = apsw.Connection(str(brain))  # another program breaks the file's schema
        conn.execute("DROP TABLE memgui_journal")
        conn.close()
        failed = client.post("/api/memories", json={"content": "after", "type": "TODO"})
        assert failed.status_code == 500
        assert failed.json() == {
            "error": "store failed due to a storage error (details are in the server log)"
        }
        assert "memgui_journal" not in failed.text
    assert "memgui_journal" in server.log()  # the detail went to the log


def test_a_non_loopback_address_needs_allow_remote(tmp_path: Path) -> None:
    brain = tmp_path / "brain.sqlite"
    refused = subprocess.run(
        memgui_argv("--brain", str(brain), "serve-rest", "--addr", "0.0.0.0:0"),
        capture_output=True, text=True, env=server_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stdout == ""
    assert "0.0.0.0:0" in refused.stderr and "--allow-remote" in refused.stderr
    assert not brain.exists()  # refused before anything was opened
    bad = subprocess.run(
        memgui_argv("--brain", str(brain), "serve-rest", "--addr", "127.0.0.1:70000"),
        capture_output=True, text=True, env=server_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr
    args = ("--brain", str(brain), "serve-rest", "--addr", "0.0.0.0:0", "--allow-remote")
    with rest_server(server_env(tmp_path), *args) as server:
        port = server.url.rsplit(":", 1)[1]
        with httpx.Client(timeout=60) as client:  # spoken to over loopback only
            assert client.get(f"http://127.0.0.1:{port}/health").status_code == 200
    assert "WARNING" in server.log() and "exposed on 0.0.0.0" in server.log()
