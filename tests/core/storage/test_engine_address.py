"""A brain's address chooses its engine; a PostgreSQL address needs a brain id and never
shows its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.storage.engine import is_postgres_address, parse_postgres_address


@pytest.mark.parametrize(
    ("address", "postgres"),
    [
        ("postgresql://u@h/db?brain_id=a", True),
        ("postgres://h/db?brain_id=a", True),
        ("POSTGRESQL://h/db", True),
        ("brain.sqlite", False),
        (str(Path.cwd() / "postgresql" / "brain.sqlite"), False),  # an absolute path
        ("postgresql:brain.sqlite", False),  # a file whose name has a colon
        ("", False),
    ],
)
def test_the_address_chooses_the_engine(address: str, postgres: bool) -> None:
    assert is_postgres_address(address) is postgres


def test_the_brain_id_comes_from_the_address_or_is_given() -> None:
    parsed = parse_postgres_address(
        "postgresql://me:pw@db.example:5433/mem?sslmode=require&brain_id=team"
    )
    assert parsed.brain_id == "team"
    assert parsed.conninfo == "postgresql://me:pw@db.example:5433/mem?sslmode=require"
    assert str(parsed) == "postgresql://me:***@db.example:5433/mem?sslmode=require&brain_id=team"
    given = parse_postgres_address("postgresql://h/mem", "ops")
    assert given.brain_id == "ops" and given.conninfo == "postgresql://h/mem"
    assert parse_postgres_address("postgresql://h/mem?brain_id=ops", "ops").brain_id == "ops"


@pytest.mark.parametrize(
    ("address", "brain_id", "says"),
    [
        ("postgresql://h/mem", None, "is required for a PostgreSQL brain"),
        ("postgresql://h/mem?brain_id=a", "b", "must agree with the address's brain_id 'a'"),
        ("postgresql://h/mem?brain_id=a&brain_id=b", None, "must be given once"),
        ("postgresql://h/mem?brain_id=", None, "brain_id"),
    ],
)
def test_a_missing_or_contradicting_brain_id_is_refused(
    address: str, brain_id: str | None, says: str
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_postgres_address(address, brain_id)
    assert caught.value.field == "brain_id" and says in str(caught.value)
