"""A relay between a client and the test's PostgreSQL server (its Unix socket), which can
cut the connection around a COMMIT: after the server got it and before its answer reaches
the client (the outcome unknown to the client), or before the server gets it. How a
network cut at the worst moment looks from the client, on a real server."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ANSWER_WAIT_S = 60.0  # a bound on the wait for the server's answer, not a pause
COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"  # the simple query psycopg sends to commit


class CommitCutter:
    """`address`: the brain's address through the relay. `cut_next_commit(after=True)`:
    the next COMMIT reaches the server and its answer is lost; `after=False`: it is lost
    on its way. `cuts`: how many were cut."""

    def __init__(self, address: str) -> None:
        parts = urlsplit(address)
        query = dict(parse_qsl(parts.query))
        port = parts.port or int(query.get("port", 5432))
        self._target = str(Path(query["host"]) / f".s.PGSQL.{port}")
        self._dir = tempfile.mkdtemp(prefix="memgui-cut-")
        query["host"] = self._dir  # the same port: the socket's name in the folder
        self.address = urlunsplit(parts._replace(query=urlencode(query)))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(Path(self._dir) / f".s.PGSQL.{port}"))
        self._listener.listen()
        self._armed: bool | None = None  # None: relay all; True: cut after; False: before
        self._lock = threading.Lock()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_next_commit(self, after: bool = True) -> None:
        with self._lock:
            self._armed = after

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(self._target)
            cut, answered = threading.Event(), threading.Event()
            up = (client, server, cut, answered)
            threading.Thread(target=self._up, args=up, daemon=True).start()
            down = (server, client, cut, answered)
            threading.Thread(target=self._down, args=down, daemon=True).start()

    def _up(
        self,
        client: socket.socket,
        server: socket.socket,
        cut: threading.Event,
        answered: threading.Event,
    ) -> None:
        """Client to server: a COMMIT while armed cuts the connection, after or before."""
        try:
            while data := client.recv(65536):
                with self._lock:
                    armed = self._armed if COMMIT in data else None
                    if armed is not None:
                        self._armed = None
                        self.cuts += 1
                if armed is None:
                    server.sendall(data)
                    continue
                cut.set()  # from now, nothing more reaches the client
                if armed:
                    server.sendall(data)
                    answered.wait(ANSWER_WAIT_S)  # committed; its answer is lost here
                break
        except OSError:
            pass
        finally:
            _close(client, server)

    def _down(
        self,
        server: socket.socket,
        client: socket.socket,
        cut: threading.Event,
        answered: threading.Event,
    ) -> None:
        try:
            while data := server.recv(65536):
                if cut.is_set():
                    answered.set()  # the COMMIT's answer: not passed on
                    return
                client.sendall(data)
        except OSError:
            pass
        finally:
            if not cut.is_set():
                _close(client, server)

    def close(self) -> None:
        self._listener.close()
        for name in os.listdir(self._dir):
            os.unlink(Path(self._dir) / name)
        os.rmdir(self._dir)


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
