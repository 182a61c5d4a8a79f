"""Typed errors of the memory core.

Every error a caller can cause names the field, the bound and the value, so a CLI, an
agent or a dialog can show the message as it is. Exit codes follow the `memgui` command.
"""

from __future__ import annotations


class MemguiError(Exception):
    """Base of every error the core raises on purpose."""

    exit_code = 1


class InvalidArgument(MemguiError):
    """A value outside its bounds; nothing was written."""

    exit_code = 2

    def __init__(self, field: str, problem: str, value: object = None) -> None:
        self.field = field
        self.problem = problem
        self.value = value
        super().__init__(f"invalid argument: {field} {problem}")


class QuerySyntaxError(InvalidArgument):
    """A search query that FTS5 rejects even after the natural-language rewrite."""

    def __init__(self, query: str) -> None:
        super().__init__("query", "is not a valid FTS5 match expression", query)
        self.args = (f'invalid search query "{query}": not a valid FTS5 match expression',)

    def __str__(self) -> str:
        return self.args[0]


class BrainIdRequired(MemguiError):
    """The file holds several brains and the caller named none (or one it does not hold)."""

    exit_code = 2

    def __init__(self, path: str, brain_ids: list[str], given: str | None = None) -> None:
        self.brain_ids = brain_ids
        listed = ", ".join(brain_ids)
        if given is None:
            msg = f"{path} holds several brains ({listed}); name one with --brain-id"
        else:
            msg = f"{path} holds no brain '{given}' (it holds: {listed})"
        super().__init__(msg)


class NotFound(MemguiError):
    exit_code = 3

    def __init__(self, missing_id: str, what: str = "trace") -> None:
        self.missing_id = missing_id
        self.what = what
        super().__init__(f"{what} not found: missing_id={missing_id!r}")


class Conflict(MemguiError):
    """A compare-and-set write whose version was stale: nothing changed."""

    exit_code = 4

    def __init__(self, trace_id: str, expected: int, actual: int) -> None:
        self.trace_id = trace_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"conflict: trace {trace_id} is at version {actual}, not {expected}; "
            "it changed since it was read, nothing was written"
        )

    @classmethod
    def because(cls, trace_id: str, why: str, expected: int = -1, actual: int = -1) -> Conflict:
        """A conflict whose message says what changed (not every conflict is a version)."""
        err = cls(trace_id, expected, actual)
        err.args = (f"conflict: {why}; nothing was written",)
        return err


class PlanOutdated(MemguiError):
    """An import plan whose new records the brain got meanwhile (another import, an agent):
    committing it would write them twice. Nothing was written; plan again."""

    exit_code = 4

    def __init__(self, clashes: int, example_record: str, example_trace: str) -> None:
        self.clashes = clashes
        super().__init__(
            f"the brain changed since this import was planned: {clashes} of the memories it "
            f"would add are in the brain now (e.g. {example_record} as trace {example_trace}); "
            "nothing was written, plan the import again"
        )


class ConsolidationOutdated(PlanOutdated):
    """A consolidation plan the brain overtook: a trace or edge it would change was edited,
    recalled, forgotten or merged since it was planned. Nothing was written; plan again."""

    def __init__(self, changed: int, example: str, why: str) -> None:
        self.clashes = changed
        MemguiError.__init__(
            self,
            f"the brain changed since this consolidation was planned: {changed} of the "
            f"memories it would change changed meanwhile (e.g. {example}: {why}); "
            "nothing was written, plan the consolidation again",
        )


class SchemaTooNew(MemguiError):
    def __init__(self, path: str, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            f"{path} has memgui schema version {found}, newer than this memgui "
            f"supports ({supported}); the file was not changed"
        )


class MigrationError(MemguiError):
    pass


class ReadOnlyBrain(MemguiError):
    """The brain file was opened read-only (no write bits, read-only media, an AgentOS schema
    newer than memgui knows): reads only. `why` says which, when it is not the file's mode."""

    def __init__(self, path: str, why: str | None = None) -> None:
        self.path = path
        self.why = why
        if why is None:
            super().__init__(f"{path} is read-only; it cannot be migrated or written")
        else:
            super().__init__(f"{path} {why}; it is opened read-only, nothing was written")


class BrainFileLost(MemguiError):
    """The brain's file was deleted, replaced or damaged while it was open (or a second
    connection found it gone): nothing is written to it, and no new file is made there."""

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        super().__init__(f"{path} {why}; nothing was written")


class RefusedByBrain(MemguiError):
    """Something in the brain file memgui did not make (a trigger, a constraint) refused a
    write: nothing was written. The message names it and gives SQLite's words."""

    def __init__(self, path: str, operation: str, what: str, said: str) -> None:
        self.path = path
        self.operation = operation
        super().__init__(f"{path}: {what} refused the {operation} ({said}); nothing was written")


class DamagedBrain(MemguiError):
    """The brain file is not a SQLite database, or SQLite finds it damaged: it is not read
    or written. `said` keeps SQLite's words."""

    def __init__(self, path: str, said: object) -> None:
        self.path = path
        super().__init__(
            f"{path} is not a readable brain: it is not a SQLite database, or it is damaged "
            f"(SQLite says: {said}); nothing was written"
        )


class BrainBusy(MemguiError):
    """Another connection held the brain's write lock for longer than a write waits: nothing
    was written; trying again later may succeed. Reads go on meanwhile (WAL)."""

    exit_code = 5

    def __init__(self, path: str, operation: str, holder: str, waited_s: float) -> None:
        self.path = path
        self.operation = operation
        self.holder = holder
        self.waited_s = waited_s
        super().__init__(
            f"{path} is busy: {holder} has held its write lock for more than "
            f"{_seconds(waited_s)}; the {operation} was not done, nothing was written "
            "(try again when it is finished)"
        )


class BrainLocked(BrainBusy):
    """A shared brain's long operation (a copy, re-file, sweep, merge, consolidation) holds
    the brain id's advisory lock: this one was refused before it wrote anything."""

    def __init__(self, address: str, operation: str, holder: str) -> None:
        MemguiError.__init__(
            self,
            f"{address} is busy: {holder} holds its lock for a long operation; the "
            f"{operation} was not done, nothing was written (try again when it is finished)",
        )
        self.path, self.operation, self.holder, self.waited_s = address, operation, holder, 0.0


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


class StorageError(MemguiError):
    """SQLite failed; the message names the operation, never SQL text."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        super().__init__(f"{operation} failed due to a storage error")


class EmbeddingUnavailable(MemguiError):
    pass


class NotOnPostgres(MemguiError):
    """An operation the PostgreSQL engine does not serve yet."""

    exit_code = 2

    def __init__(self, operation: str) -> None:
        self.operation = operation
        super().__init__(
            f"{operation} is not available on a PostgreSQL brain yet (docs/shared-brains.md); "
            "copy the brain to a file with memgui copy to use it there"
        )


class BrainDeadlocked(BrainBusy):
    """A shared brain's write and another writer's each waited for what the other held;
    the server ended this one: nothing of it was written, and trying again succeeds."""

    def __init__(self, address: str, operation: str) -> None:
        self.path = address
        self.operation = operation
        self.holder = "another writer"
        self.waited_s = 0.0
        MemguiError.__init__(
            self,
            f"{address}: this {operation} and another writer's change each waited for rows "
            "the other held, and the server ended this one; nothing was written (try again)",
        )


class PostgresUnavailable(MemguiError):
    """The PostgreSQL driver is not installed, or the server cannot be reached."""

    exit_code = 3


class PostgresPasswordRequired(PostgresUnavailable):
    """The server asks for a password and none was found (`PGPASSWORD`, `~/.pgpass`, the
    address), or the one given was wrong: a caller that can ask the person does."""

    def __init__(self, address: str, wrong: bool) -> None:
        self.address = address
        self.wrong = wrong
        said = "refused the password" if wrong else "asks for a password and none was given"
        super().__init__(
            f"the PostgreSQL server of {address} {said} (memgui reads PGPASSWORD and "
            "~/.pgpass, as libpq does)"
        )
