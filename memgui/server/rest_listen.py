"""`memgui serve-rest`: where the REST API listens, and the uvicorn server around it.

The API has no authentication, so it binds loopback only unless `--allow-remote` is given;
then it logs a loud warning naming the exposure. Port 0 picks a free port. The line
`REST listening on http://HOST:PORT` goes to stderr once uvicorn accepts connections: it is
the server's readiness signal (as agent-memory's is).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import socket

import uvicorn

from memgui.core.errors import InvalidArgument
from memgui.server.rest import create_app
from memgui.server.runtime import ServerOptions, ToolService, quiet_collector

log = logging.getLogger("memgui.server.rest")

READY = "REST listening on"


def parse_addr(text: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets) as (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise InvalidArgument("addr", f"must be HOST:PORT with a port 0-65535 (got {text!r})", text)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_exposure(host: str, port: int, allow_remote: bool) -> None:
    """Refuse a non-loopback address without `--allow-remote`; with it, warn loudly."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise InvalidArgument(
            "addr",
            f"is not a loopback address (got {host}:{port}); the REST API has no "
            "authentication, so listening beyond this machine needs --allow-remote",
            host,
        )
    log.warning(
        "WARNING: the REST API is exposed on %s:%d without authentication: anyone who can "
        "reach this address can read, change and delete every memory in the brain. Keep it "
        "behind a VPN, an SSH tunnel or an authenticating reverse proxy.",
        host,
        port,
    )


def listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: a response's head and body go out at once, and a
    # kept-alive client is not left waiting ~40 ms for Nagle and a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def serve(options: ServerOptions, addr: str, allow_remote: bool) -> None:
    host, port = parse_addr(addr)
    check_exposure(host, port, allow_remote)
    sock = listening_socket(host, port)
    service = ToolService(options, actor="rest")
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again under the
    # handler it found: a quiet one here, so the brain is closed and the process exits 0.
    quiet = signal.signal(signal.SIGTERM, _stopping)
    try:
        service.start()
        quiet_collector()
        asyncio.run(_serve(service, sock))
    finally:
        signal.signal(signal.SIGTERM, quiet)
        sock.close()
        service.close()
        log.info("REST server stopped")


def _stopping(signum: int, frame: object) -> None:
    """SIGTERM once uvicorn has let go of it: the shutdown is already under way."""


async def _serve(service: ToolService, sock: socket.socket) -> None:
    config = uvicorn.Config(create_app(service), log_config=None, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)  # uvicorn has no event for "accepting"; this polls its flag
    if server.started:
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        log.info(
            "%s http://%s:%d (brain %s, Ollama %s)",
            READY, shown, port, service.where, service.embedder.url,
        )  # fmt: skip
    await serving
