"""A server that asks for a password: memgui takes one typed by the person, else libpq's own
(PGPASSWORD, ~/.pgpass), says which failed when none or a wrong one was given, and never
shows it. The test server's other roles stay on trust; one role of its own needs a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.errors import PostgresPasswordRequired, PostgresUnavailable
from memgui.core.shared_brain import SharedBrain
from tests.support.postgres import ROLE, SECRET

pytestmark = pytest.mark.slow  # a real server


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
