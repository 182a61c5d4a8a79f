"""Giving each planned trace record its verdict: new, duplicate or update.

Records are compared with the brain (one scan, `brain_index`) and with the records before
them in the source. Live records are weighed before forgotten ones, so a source holding a
live and a forgotten record of one text imports the live one and calls the other its
duplicate, whatever order the file holds them in; a record is never merged into a forgotten
twin in the source. In the brain, a forgotten trace counts as any other (seed 000: an import
does not bring a forgotten trace back), and where the brain holds a live and a forgotten one,
the record duplicates the live one.

Updates follow the seed: a SQLite record that duplicates a trace unions its tags (and the
later `created_at`) into it; a Markdown or Obsidian note that is its trace's own note (its
`id` names a trace of its scope and scope id whose text it holds) is skipped, and an Obsidian
one adds the tags of its tag line and the **Related:** links the trace lacks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from memgui.core.io.planning import brain_index, classify_rows
from memgui.core.io.planning.brain_index import (
    AGENT_MEMORY_WHERE,
    Match,
    TraceIndex,
    agent_memory_key,
    sha256,
    user_of,
)
from memgui.core.io.readers.jsonl_fields import MemoryFields
from memgui.core.io.readers.obsidian_reader import read_trailer
from memgui.core.io.readers.text_utils import normalize_newlines
from memgui.core.io.records import (
    DUPLICATE,
    ERROR,
    NEW,
    REFUSED,
    TRACE,
    UPDATE,
    ImportRecord,
    LazyFields,
    plain_fields,
)
from memgui.core.model import TraceIds
from memgui.core.progress import Progress, paused_steps

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan

PROGRESS_EVERY = 5000
NOTE_FORMATS = ("markdown", "obsidian")
Trailer = tuple[list[str], list[str]]  # an own note's tag-line tags and Related labels


def file_of(source: str) -> str:
    """The file part of a record's source (`notes/a.md:12` -> `notes/a.md`)."""
    head = source.split("#", 1)[0]
    stem, _, tail = head.rpartition(":")
    return stem if stem and tail.isdigit() else head


def fingerprint(fields: Mapping[str, Any]) -> str:
    data = orjson.dumps(
        plain_fields(fields), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=repr
    )
    return sha256(data.decode("utf-8", "replace"))


def apply_scope(record: ImportRecord, scope: str | None, scope_id: str | None) -> None:
    """The options' target scope / scope id replace the record's own."""
    fields = record.fields
    if scope is not None:
        fields["scope"] = scope
    if scope_id is not None:
        fields["scope_id"] = scope_id
        metadata = fields.get("metadata")
        if isinstance(metadata, dict):
            metadata["scopeId"] = scope_id


def trace_hashes(fields: dict[str, Any], fmt: str) -> list[str]:
    """The hashes a record is known by. JSONL keeps agent-memory's key (source, type, text)."""
    metadata = fields.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    import_hash = metadata.get("import_hash")
    if fmt == "jsonl":
        text_hash = import_hash if isinstance(import_hash, str) else sha256(fields["content"])
        key = agent_memory_key(fields.get("category"), metadata.get("source"), text_hash)
        return [key] if key else []
    hashes = [sha256(fields["content"])]
    if isinstance(import_hash, str) and import_hash not in hashes:
        hashes.append(import_hash)
    return hashes


def where_of(fields: dict[str, Any]) -> tuple[str, str, str | None]:
    """The scope, scope id and user a trace record dedups within."""
    scope_id = fields.get("scope_id")
    return (
        fields.get("scope") or "user",
        scope_id if isinstance(scope_id, str) else "",
        user_of(fields.get("metadata")),
    )


def _describe_scope(scope: str, scope_id: str, user: str | None) -> str:
    if (scope, scope_id, user) == AGENT_MEMORY_WHERE:
        return "agent-memory's key: the same source, type and text"
    text = f"scope {scope}, scope id {scope_id!r}"
    return text + (f", user {user!r}" if user else "")


_VIA = {
    "text": "same text as",
    "import_hash": "same SHA-256 as the import_hash of",
    "key": "same source, type and text as",
}


def _mark_duplicate(record: ImportRecord, match: Match, where: str) -> None:
    record.verdict = DUPLICATE
    record.existing_id = match.trace_id
    what = _VIA[match.via]
    state = " (a forgotten trace)" if match.deleted else ""
    record.reason = f"{what} trace {match.trace_id}{state} in {where}"


class TracePlanner:
    """Classifies the plan's trace records; remembers what each source id became."""

    def __init__(self, brain: Brain, plan: ImportPlan) -> None:
        self.brain = brain
        self.plan = plan
        self.fmt = plan.format
        self.dedup = plan.options.dedup
        self.index: TraceIndex = brain_index.load_traces(
            brain, agent_memory_keys=self.fmt == "jsonl"
        )
        self.seen = TraceIndex()  # this source's records so far, by the same keys
        self.claimed: set[str] = set()
        self.fresh_id = TraceIds()  # ids for records the source gives none (or a taken one)
        self.id_map: dict[str, str] = {}  # source trace id -> the trace it is in the brain
        self.new_ids: set[str] = set()  # ids of the traces the plan writes
        self.update_candidates: dict[int, str] = {}  # record index -> trace it matched
        self.trailers: dict[int, Trailer] = {}  # an own note's tag-line tags, Related labels

    def run(self) -> Iterator[Progress]:
        plan = self.plan
        options = plan.options
        indexes: list[int] = []
        for i, record in enumerate(plan.records):
            if record.kind != TRACE:
                continue
            if record.verdict == NEW and isinstance(record.fields.get("content"), str):
                if options.scope is not None or options.scope_id is not None:
                    apply_scope(record, options.scope, options.scope_id)
                indexes.append(i)
        # Live records first: a live record is never the duplicate of its forgotten twin.
        indexes.sort(key=lambda i: bool(plan.records[i].fields.get("deleted")))
        own_notes = self._own_note_traces(indexes) if self.fmt in NOTE_FORMATS else {}
        for done, i in enumerate(indexes, start=1):
            self._classify(i, plan.records[i], own_notes)
            if done % PROGRESS_EVERY == 0:
                yield Progress(done, len(indexes), f"compared {done} of {len(indexes)} memories")
        self._chain_reader_duplicates()
        if self.update_candidates:
            classify_rows.plan_updates(
                self.brain, plan, self.update_candidates, own_notes, self.trailers
            )

    def _own_note_traces(self, indexes: list[int]) -> dict[str, dict[str, Any]]:
        named = {
            self.plan.records[i].fields["id"]
            for i in indexes
            if isinstance(self.plan.records[i].fields.get("id"), str)
        }
        return brain_index.trace_rows(self.brain, named & self.index.ids)

    def _classify(self, i: int, record: ImportRecord, own_notes: dict[str, dict[str, Any]]) -> None:
        lazy = record.fields
        if type(lazy) is MemoryFields and lazy.checked:
            # A JSONL memory as its reader made it: its key without building its fields.
            key = agent_memory_key(lazy.category, lazy.source, lazy.import_hash)
            self._place(i, record, lazy.trace_id, AGENT_MEMORY_WHERE, [key] if key else [])
            return
        fields = plain_fields(lazy)  # read here several times: built once
        source_id: Any = fields.get("id")  # whatever the source held there
        scope, scope_id, user = AGENT_MEMORY_WHERE if self.fmt == "jsonl" else where_of(fields)
        own = own_notes.get(source_id) if own_notes and isinstance(source_id, str) else None
        obsidian = self.fmt == "obsidian"
        trailer = (
            None
            if own is None
            else own_note(own, fields, record.note_tail, (scope, scope_id), obsidian)
        )
        if own is not None and trailer is not None:
            record.verdict, record.existing_id = DUPLICATE, own["id"]
            record.reason = f"the note of trace {own['id']}, which holds its text already"
            self.id_map[source_id] = own["id"]
            if self.fmt == "obsidian":
                self.update_candidates[i] = own["id"]
                self.trailers[i] = trailer
            return
        hashes = trace_hashes(fields, self.fmt)
        where = (scope, scope_id, user)
        self._place(i, record, source_id, where, hashes, bool(fields.get("deleted")))

    def _place(
        self,
        i: int,
        record: ImportRecord,
        source_id: Any,
        where: tuple[str, str, str | None],
        hashes: list[str],
        deleted: bool = False,
    ) -> None:
        """A duplicate of what the brain or the source holds by one of `hashes`, else new."""
        scope, scope_id, user = where
        if self.dedup:
            match = self.index.find(scope, scope_id, user, hashes)
            if match is not None:
                _mark_duplicate(record, match, _describe_scope(scope, scope_id, user))
                self._remember(source_id, match.trace_id)
                if self.fmt == "sqlite":
                    self.update_candidates[i] = match.trace_id
                return
            match = self.seen.find(scope, scope_id, user, hashes)
            if match is not None:
                record.verdict, record.existing_id = DUPLICATE, match.trace_id
                record.reason = (
                    f"{_VIA[match.via]} the record written as {match.trace_id} earlier in "
                    f"this source ({_describe_scope(scope, scope_id, user)})"
                )
                self._remember(source_id, match.trace_id)
                return
        trace_id = self._free_id(source_id)
        if trace_id != source_id and not _takes_id(record, source_id, trace_id):
            self.plan.resolved[i] = {"id": trace_id}  # written under its own id: no entry
        self.new_ids.add(trace_id)
        self._remember(source_id, trace_id)
        via = "key" if self.fmt == "jsonl" else "text"
        match = Match(trace_id, deleted, via)
        for digest in hashes:
            self.seen.add((scope, scope_id, user, digest), match)

    def _free_id(self, wanted: Any) -> str:
        """The source's id when the brain and the plan leave it free, else a new one."""
        free = isinstance(wanted, str) and wanted and wanted not in self.index.ids
        if free and wanted not in self.claimed:
            self.claimed.add(wanted)
            return wanted
        trace_id = self.fresh_id()
        self.claimed.add(trace_id)
        return trace_id

    def _remember(self, source_id: Any, trace_id: str) -> None:
        if isinstance(source_id, str) and source_id and source_id not in self.id_map:
            self.id_map[source_id] = trace_id

    def _chain_reader_duplicates(self) -> None:
        """A reader's duplicate names a source record; point it at what that record became."""
        for record in self.plan.records:
            if record.kind == TRACE and record.verdict == DUPLICATE and record.existing_id:
                record.existing_id = self.id_map.get(record.existing_id, record.existing_id)


def _takes_id(record: ImportRecord, source_id: Any, trace_id: str) -> bool:
    """True when the record, whose source gave no id, now holds the one chosen for it."""
    fields = record.fields
    return source_id is None and isinstance(fields, LazyFields) and fields.take_id(trace_id)


def own_note(
    trace: dict[str, Any], fields: dict[str, Any], tail: str, where: tuple[str, str], obsidian: bool
) -> Trailer | None:
    """What follows the trace's text in its own note, or None when the note is not its own.

    The note's body is read whole (`content` plus what the Obsidian reader cut as the
    export's trailer): it must be the trace's text, then nothing but a tag line and a
    **Related:** list (seed 000). A text that itself ends in such a list is read as text.
    """
    # AgentOS's own exports write no `scopeId`: a note that names none is taken to be
    # in its trace's scope id (its id and text already say which trace it is).
    named = isinstance(fields.get("metadata"), dict) and "scopeId" in fields["metadata"]
    scope, scope_id = where
    if trace["scope"] != scope or (named and trace["scope_id"] != scope_id):
        return None
    text = normalize_newlines(trace["content"]).strip()
    body = fields["content"] + tail
    starts = [0]
    at = text.find("---\n") if text.startswith("---\n") else -1
    while at >= 0:
        # AgentOS's export folds a text that opens with a `---` block into the front matter,
        # leaving only what follows the block as the note's body.
        starts.append(at + 4)
        at = text.find("---\n", at + 4)
    for start in starts:
        shown = text[start:]
        if shown and body.startswith(shown):
            rest = body[len(shown) :]
            trailer = read_trailer(rest) if obsidian else ([], []) if not rest else None
            if trailer is not None:
                return trailer
    return None


def classify(brain: Brain, plan: ImportPlan) -> Iterator[Progress]:
    """Give every record of `plan` its verdict (see the module docstring)."""
    # A big plan's maps and verdicts live on: nothing for the garbage collector to find.
    # Marked before the brain's keys are read: what is written after them, a commit checks.
    plan.journal_mark, plan.rowid_mark = brain_index.marks(brain)
    traces = TracePlanner(brain, plan)
    yield from paused_steps(traces.run())
    rows = classify_rows.classify_rows(brain, plan, traces.id_map, traces.new_ids)
    yield from paused_steps(rows)
    for i, record in enumerate(plan.records):
        if record.verdict in (REFUSED, ERROR):
            plan.fingerprints[i] = fingerprint(record.fields)


__all__ = ["UPDATE", "classify", "file_of", "fingerprint"]
