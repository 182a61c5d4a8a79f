"""The REST API: seed 001's routes over the `agent-memory` tools (FastAPI).

Every route is a thin shell over `memgui.core.tools.call`, so REST accepts and refuses what
MCP does with the same messages. Status codes are seed 001's: 200 (201 for a new memory),
400 `{"error": …}` for a refused value, 404 with a structured body for an unknown id, and on
the two v0.0.1 body routes (`POST /api/memories`, `POST /api/search`) axum's plain-text
rejections of a body that never reaches the tools (400 malformed JSON, 415 no JSON content
type, 422 a missing or wrongly typed field). A stale `expect_version` is 409; a brain that
cannot be written (read-only, deleted) 503; a storage failure 500 with a generic message,
its detail in the server log only. What a shared (PostgreSQL) brain does not serve yet is 501
with a message naming the operation.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from memgui.core.tools import ParameterError, ToolResult
from memgui.server.runtime import (
    CONFLICT,
    INTERNAL,
    NOT_FOUND,
    PARAMS,
    UNAVAILABLE,
    UNSUPPORTED,
    ToolService,
    failure,
    operation_of,
)

log = logging.getLogger("memgui.server.rest")

STATUS = {
    PARAMS: 400,
    CONFLICT: 409,
    NOT_FOUND: 404,
    UNAVAILABLE: 503,
    UNSUPPORTED: 501,  # not served on a shared (PostgreSQL) brain yet
    INTERNAL: 500,
}
_INTEGER = re.compile(r"[+-]?\d{1,25}")
JSON_TYPE_REFUSED = "Expected request with `Content-Type: application/json`"


class BodyRefused(Exception):
    """A request body that never reaches the tools: (status, text) as axum words it."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status, headers, media_type="application/json")


def error_response(status: int, message: str) -> Response:
    return json_response({"error": message}, status)


def _is_json(request: Request) -> bool:
    value = request.headers.get("content-type", "")
    essence = value.split(";", 1)[0].strip().lower()
    return essence == "application/json" or (
        essence.startswith("application/") and essence.endswith("+json")
    )


async def read_body(request: Request) -> Any:
    """The JSON body, or BodyRefused (415 no JSON content type, 400 malformed JSON)."""
    if not _is_json(request):
        raise BodyRefused(415, JSON_TYPE_REFUSED)
    try:
        return orjson.loads(await request.body())
    except orjson.JSONDecodeError as error:
        raise BodyRefused(400, f"Failed to parse the request body as JSON: {error}") from None


def _query_value(name: str, text: str) -> Any:
    """A query-string value as the tool reads it: numbers and true/false become JSON
    values; anything else stays text, for the tools to refuse by name."""
    if name in ("limit", "expect_version") and _INTEGER.fullmatch(text):
        return int(text)
    if name == "expand_links" and text in ("true", "false"):
        return text == "true"
    return text


class Api:
    """The route handlers over one `ToolService`."""

    def __init__(self, service: ToolService) -> None:
        self.service = service

    async def run(self, tool: str, args: Any, ok: int = 200, legacy_body: bool = False) -> Response:
        try:
            result = await self.service.call(tool, args, "rest")
        except Exception as error:
            kind, message = failure(error, operation_of(tool))
            if legacy_body and isinstance(error, ParameterError):
                return PlainTextResponse(
                    f"Failed to deserialize the JSON body into the target type: {error.problem}",
                    422,
                )
            return error_response(STATUS.get(kind, 400), message)
        return self._answer(result, ok)

    @staticmethod
    def _answer(result: ToolResult, ok: int) -> Response:
        headers = None
        if result.next_cursor is not None:
            cursor = urllib.parse.quote(result.next_cursor)
            link = f'<?cursor={cursor}>; rel="next"'
            headers = {"X-Next-Cursor": result.next_cursor, "Link": link}
        status = 404 if not result.found else (201 if result.created else ok)
        return json_response(result.data, status, headers)

    async def legacy(self, request: Request, tool: str, ok: int) -> Response:
        """A v0.0.1 body route: axum's plain-text rejections, then the tool."""
        try:
            body = await read_body(request)
        except BodyRefused as refused:
            return PlainTextResponse(refused.text, refused.status)
        return await self.run(tool, body, ok, legacy_body=True)

    async def strict(self, request: Request, tool: str, extra: dict[str, Any]) -> Response:
        """A v0.1.0 body route: every body fault is 400 `{"error": …}`."""
        try:
            body = await read_body(request)
        except BodyRefused as refused:
            return error_response(400, refused.text)
        if isinstance(body, dict):
            clash = sorted(set(body) & set(extra))
            if clash:  # the id goes in the path, never in the body
                return error_response(
                    400, f"failed to deserialize parameters: unknown field `{clash[0]}`"
                )
            body = {**body, **extra}
        return await self.run(tool, body)


def create_app(service: ToolService) -> FastAPI:
    """The FastAPI app of seed 001's routes over `service` (profile agent-memory)."""
    app = FastAPI(title="memgui", docs_url=None, redoc_url=None, openapi_url=None, lifespan=None)
    api = Api(service)

    @app.post("/api/memories")
    async def store(request: Request) -> Response:
        return await api.legacy(request, "memory_store", 201)

    @app.get("/api/memories")
    async def list_memories(request: Request) -> Response:
        args = {k: _query_value(k, v) for k, v in request.query_params.items()}
        return await api.run("memory_list", args)

    @app.post("/api/search")
    async def search(request: Request) -> Response:
        return await api.legacy(request, "memory_search", 200)

    @app.patch("/api/memories/{memory_id}")
    async def update(memory_id: str, request: Request) -> Response:
        return await api.strict(request, "memory_update", {"id": memory_id})

    @app.delete("/api/memories/{memory_id}")
    async def forget(memory_id: str, request: Request) -> Response:
        args: dict[str, Any] = {"id": memory_id}
        if "expect_version" in request.query_params:
            version = request.query_params["expect_version"]
            args["expect_version"] = _query_value("expect_version", version)
        return await api.run("memory_forget", args)

    @app.post("/api/links")
    async def link(request: Request) -> Response:
        return await api.strict(request, "memory_link", {})

    @app.delete("/api/links/{from_id}/{to_id}/{kind}")
    async def unlink(from_id: str, to_id: str, kind: str) -> Response:
        return await api.run("memory_unlink", {"from_id": from_id, "to_id": to_id, "kind": kind})

    @app.get("/health")
    async def health() -> Response:
        try:
            await service.storage_check()
        except Exception as error:
            kind, message = failure(error, "health")
            return error_response(STATUS.get(kind, 500), message)
        embedder = await service.embedder_status()
        return json_response({"status": "ok", "embedder": embedder})

    @app.exception_handler(StarletteHTTPException)
    async def no_route(request: Request, error: StarletteHTTPException) -> Response:
        if error.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        else:
            message = f"no route {request.method} {request.url.path}"
        return error_response(error.status_code, message)

    return app
