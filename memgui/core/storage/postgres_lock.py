"""The advisory lock of a brain id on PostgreSQL, held by a long write (an import's commit, a
copy into the brain).

The key is AgentOS's: it runs its schema migrations under
`pg_advisory_xact_lock(hashtext('agentos_brain:' || brainId))` (`MigrationRunner`), so an
import never writes into a brain AgentOS is migrating, nor two imports into one brain at
once. The lock is the transaction's and goes when it ends, however it ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

KEY_SQL = "hashtext('agentos_brain:' || %s)"


def advisory_lock(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> None:
    """Wait for, then hold until the transaction ends, the brain id's lock."""
    conn.execute(f"SELECT pg_advisory_xact_lock({KEY_SQL})", (brain_id,))
