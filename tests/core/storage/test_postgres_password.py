"""A server that asks for a password: memgui takes one typed by the person, else libpq's own
(PGPASSWORD, ~/.pgpass), says which failed when none or a wrong one was given, and never
shows it. The test server's other roles stay on trust; one role of its own needs a password."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import psycopg
import pytest

from memgui.core.errors import PostgresPasswordRequired, PostgresUnavailable
from memgui.core.shared_brain import SharedBrain
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.slow  # a real server

ROLE, SECRET = "memgui_pw", "s3cret-word"
HBA_LINE = f"local all {ROLE} scram-sha-256"


@pytest.fixture
def guarded_address(pg_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An address of a new database as `memgui_pw`, whose logins need its password."""
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


def test_no_password_then_a_wrong_one_then_the_right_one(guarded_address: str) -> None:
    with pytest.raises(PostgresPasswordRequired) as none:
        SharedBrain.open(guarded_address)
    assert not none.value.wrong and "asks for a password" in str(none.value)
    with pytest.raises(PostgresPasswordRequired) as wrong:
        SharedBrain.open(guarded_address, password="guess")
    assert wrong.value.wrong and "refused the password" in str(wrong.value)
    assert "guess" not in str(wrong.value)
    assert isinstance(wrong.value, PostgresUnavailable)  # exit 3 on the command line
    with SharedBrain.open(guarded_address, password=SECRET) as brain:
        assert brain.add("behind a password").content == "behind a password"


def test_libpq_finds_the_password_itself(
    guarded_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", SECRET)
    with SharedBrain.open(guarded_address) as brain:
        assert brain.count() == 0
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"*:*:*:{ROLE}:{SECRET}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    with SharedBrain.open(guarded_address) as brain:
        assert brain.count() == 0
