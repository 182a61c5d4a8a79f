"""Reader of ChatGPT exports: `conversations.json` (an array, or one conversation object)
and the newer export that arrives as a folder of JSON files.

Each conversation gives a `conversation` record, a `message` record per message the person
saw, and an episodic `trace` per question and the reply that answered it
(`[user]: …\\n[assistant]: …`; a question never answered is `[user]: …` alone). By default
only the branch the person last saw is read (`current_node` back to the root);
`all_branches=True` reads every edit and regeneration, one trace per reply.

Ids are named after what they hold, so a re-import adds nothing: a conversation row is
`cv_chatgpt_<sha256 of the export's id>` (of its title and creation time when it has none), a
trace `mt_chatgpt_<sha256 of the brain id and the text>`, a message
`msg_chatgpt_<sha256 of the conversation row and the node id>`. Every conversation is
accounted for: one without messages is a `refused` conversation record saying so, and one
with messages but no question keeps its messages and says in `reason` that it gave no trace.

Message and trace records hold their fields compactly (`chatgpt_fields`): a conversation's
texts once, as UTF-8; a trace's text, a message's id and their metadata built when read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import orjson

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers import chatgpt_tree as tree
from memgui.core.io.readers import json_stream
from memgui.core.io.readers.agentos_reader import file_error, load_json
from memgui.core.io.readers.chatgpt_fields import (
    SOURCE_TAG,
    Conversation,
    MessageFields,
    TraceFields,
)
from memgui.core.io.readers.chatgpt_fields import sha256 as _sha256
from memgui.core.io.readers.text_utils import INT64, option, unexpected, unread_record
from memgui.core.io.records import (
    CONVERSATION,
    DUPLICATE,
    MESSAGE,
    NEW,
    NO_LINKS,
    TRACE,
    ImportRecord,
)
from memgui.core.io.source_files import walk_folder
from memgui.core.model import now_ms
from memgui.core.model import shown as shown_value
from memgui.core.progress import Progress

Event = Progress | ImportRecord


def conversation_row_id(conversation: dict[str, Any]) -> str:
    """`cv_chatgpt_` + SHA-256 of the export's id, else of title and creation time."""
    export_id = _export_id(conversation)
    if export_id is not None:
        return "cv_chatgpt_" + _sha256(export_id)
    created = conversation.get("create_time")
    return "cv_chatgpt_" + _sha256(f"{conversation.get('title') or ''}\n{created!r}")


def chatgpt_trace_id(brain_id: str, content: str) -> str:
    """`mt_chatgpt_` + SHA-256 of the brain id and the pair's text."""
    return "mt_chatgpt_" + _sha256(f"{brain_id}\n{content}")


def _export_id(conversation: dict[str, Any]) -> str | None:
    for key in ("conversation_id", "id"):
        value = conversation.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def time_ms(value: Any, field_name: str, fallback: int) -> int:
    """Epoch milliseconds of a time the export gives in seconds; no number gives `fallback`.

    A number whose milliseconds do not fit in 64 bits (SQLite's integers), or is not finite,
    raises InvalidArgument: the planner would take it and the commit could not write it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return fallback
    try:
        ms = round(value * 1000)
    except (OverflowError, ValueError):  # infinity, NaN
        ms = INT64
    if not -INT64 <= ms < INT64:
        raise InvalidArgument(
            field_name,
            f"must be seconds since 1970 within ±2**63 milliseconds (got {shown_value(value)})",
            value,
        )
    return ms


class _Reader:
    def __init__(self, brain_id: str, all_branches: bool) -> None:
        self.brain_id = brain_id
        self.all_branches = all_branches
        self.seen_conversations: set[str] = set()
        # conversation row id -> node ids read in it: a message id hashes the two
        self.seen_nodes: dict[str, set[str]] = {}
        self.seen_traces: dict[str, str] = {}  # trace id -> where it was first read

    def guarded(self, value: Any, where: str) -> list[ImportRecord]:
        """The records of one conversation; one the reader cannot take is lost alone."""
        try:
            return list(self.conversation(value, where))
        except Exception as exc:
            key = _export_id(value) if isinstance(value, dict) else None
            record = ImportRecord(source=f"{where}#{key}" if key else where, kind=CONVERSATION)
            return [unexpected(record, exc)]

    def conversation(self, value: Any, where: str) -> Iterator[ImportRecord]:
        if not isinstance(value, dict):
            yield ImportRecord(source=where, kind=CONVERSATION).fail(
                f"a conversation must be a JSON object (got {type(value).__name__})"
            )
            return
        row_id = conversation_row_id(value)
        key = _export_id(value) or row_id
        source = f"{where}#{key}"
        title = value.get("title")
        record = ImportRecord(
            source=source,
            kind=CONVERSATION,
            fields={
                "id": row_id,
                "title": title if isinstance(title, str) and title else "Untitled",
                "metadata": {
                    "source": SOURCE_TAG,
                    "chatgpt_id": _export_id(value),
                    "branches": "all" if self.all_branches else "current",
                },
            },
        )
        mapping = value.get("mapping")
        try:
            created = time_ms(value.get("create_time"), "create_time", now_ms())
            record.fields["created_at"] = created
            record.fields["updated_at"] = time_ms(value.get("update_time"), "update_time", created)
            if not isinstance(mapping, dict) or not mapping:
                raise InvalidArgument("mapping", 'the conversation has no "mapping": no messages')
            order, children = self._walk(mapping, value.get("current_node"))
            shown = {n: s for n in order if (s := tree.render(mapping[n], n)) is not None}
            if not shown:
                raise InvalidArgument("mapping", "mapping holds no message a person saw")
            for node_id, message in shown.items():  # checked before anything is remembered
                time_ms(message.create_time, f"mapping[{node_id!r}].message.create_time", 0)
        except InvalidArgument as exc:
            reason = exc.problem if exc.field == "mapping" else f"{exc.field} {exc.problem}"
            yield record.refuse(exc.field, reason, exc.value)
            return
        if row_id in self.seen_conversations:
            record.verdict, record.existing_id = DUPLICATE, row_id
            record.reason = "the same conversation appears earlier in this export"
        self.seen_conversations.add(row_id)

        texts = Conversation(row_id)  # the messages' texts, held once as UTF-8
        messages = list(self._messages(order, shown, mapping, texts, source, created))
        # node id -> its message record: a trace is made of its messages' fields
        by_node = {m.fields.node_id: m for m in messages}  # type: ignore[union-attr]
        traces = list(self._traces(order, children, shown, by_node))
        record.fields["metadata"]["pairs"] = len(traces)
        if not traces and record.verdict == NEW:
            record.reason = (
                f"no question in it: its {len(messages)} message(s) are kept, no memory trace"
            )
        yield record
        yield from messages
        yield from traces

    def _walk(self, mapping: dict[str, Any], current_node: Any) -> tuple[list[str], Any]:
        if self.all_branches:
            return tree.all_nodes(mapping), tree.tree_children(mapping)
        path = tree.current_branch(mapping, current_node)
        return path, tree.branch_children(path)

    def _messages(
        self,
        order: list[str],
        shown: dict[str, tree.Shown],
        mapping: dict[str, Any],
        conversation: Conversation,
        source: str,
        created: int,
    ) -> Iterator[ImportRecord]:
        ordered = [(node_id, shown[node_id]) for node_id in order if node_id in shown]
        spans = conversation.hold([message.content for _, message in ordered])
        seen = self.seen_nodes.setdefault(conversation.row_id, set())
        held: dict[str, MessageFields] = {}
        nearest: dict[str, MessageFields | None] = {}  # a hidden node -> its shown ancestor
        last_time = created
        for (node_id, message), span in zip(ordered, spans, strict=True):
            last_time = time_ms(message.create_time, "create_time", last_time)  # checked
            fields = MessageFields(
                conversation,
                span,
                node_id,
                sys.intern(message.role),  # a few names, held once per plan
                last_time,
                sys.intern(message.content_type),
                self._shown_parent(node_id, mapping, held, nearest),
            )
            held[node_id] = fields
            record = ImportRecord(
                source=f"{source}/{node_id}", kind=MESSAGE, fields=fields, links=NO_LINKS
            )
            if node_id in seen:
                record.verdict, record.existing_id = DUPLICATE, fields.row_id
                record.reason = "the same message appears earlier in this export"
            seen.add(node_id)
            yield record

    @staticmethod
    def _shown_parent(
        node_id: str,
        mapping: dict[str, Any],
        held: dict[str, MessageFields],
        nearest: dict[str, MessageFields | None],
    ) -> MessageFields | None:
        """The nearest shown ancestor's message, so the app can draw branches.

        The hidden nodes walked on the way remember what they lead to (`nearest`): many
        messages under one long hidden stretch walked it each, in time squared.
        """
        seen = {node_id}
        walked: list[str] = []
        found: MessageFields | None = None
        parent = tree._parent(mapping, node_id)
        while parent is not None and parent not in seen:
            if parent in held:
                found = held[parent]
                break
            if parent in nearest:
                found = nearest[parent]
                break
            seen.add(parent)
            walked.append(parent)
            parent = tree._parent(mapping, parent)
        for hidden in walked:
            nearest[hidden] = found
        return found

    def _traces(
        self,
        order: list[str],
        children: Any,
        shown: dict[str, tree.Shown],
        by_node: dict[str, ImportRecord],
    ) -> Iterator[ImportRecord]:
        for question, reply in tree.pairs(order, children, shown):
            content = TraceFields.text_of(question.content, [m.content for m in reply])
            trace_id = chatgpt_trace_id(self.brain_id, content)
            asked = by_node[question.node_id]
            where = asked.source  # the question's message record: `{source}/{node id}`
            # The message records this reader made hold MessageFields.
            parts = tuple(
                cast(MessageFields, by_node[m.node_id].fields) for m in (question, *reply)
            )
            record = ImportRecord(
                source=where, kind=TRACE, fields=TraceFields(trace_id, parts), links=NO_LINKS
            )
            if trace_id in self.seen_traces:
                record.verdict, record.existing_id = DUPLICATE, trace_id
                record.reason = f"the same question and reply as {self.seen_traces[trace_id]}"
            else:
                self.seen_traces[trace_id] = where
            yield record


def _conversations(payload: Any) -> list[Any] | None:
    """The conversations a parsed file holds, or None when it is not a ChatGPT export."""
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        if isinstance(payload.get("conversations"), list):
            return payload["conversations"]
        if "mapping" in payload:
            return [payload]
    return None


def _read_file(reader: _Reader, path: Path, *, strict: bool) -> Iterator[Event]:
    """One JSON file. `strict`: the file was named, so anything else in it is an error."""
    try:
        first = json_stream.first_byte(path)
    except OSError as exc:
        yield file_error(path, f"cannot be read: {exc.strerror or exc}")
        return
    if first == b"[":
        yield from _read_array(reader, path, strict=strict)
        return
    try:
        payload = load_json(path.read_bytes())
    except (orjson.JSONDecodeError, OSError) as exc:
        yield _not_read(path, f"is not valid JSON ({exc})", strict)
        return
    conversations = _conversations(payload)
    if conversations is None:
        yield _not_read(path, f"is not a ChatGPT export: it holds {_describe(payload)}", strict)
        return
    del payload
    total = len(conversations)
    for index in range(total):
        value, conversations[index] = conversations[index], None  # free as we go
        yield from reader.guarded(value, str(path))
        yield Progress(index + 1, total, f"{path.name}: conversation {index + 1} of {total}")


def _read_array(reader: _Reader, path: Path, *, strict: bool) -> Iterator[Event]:
    """A top-level array, one conversation at a time: memory stays near one conversation."""
    size = path.stat().st_size
    count = 0
    try:
        for value, end in json_stream.iter_array(path):
            if count == 0 and not strict and not (isinstance(value, dict) and "mapping" in value):
                yield _not_read(path, f"holds {_describe(value)} first, not a conversation", False)
                return
            count += 1
            if isinstance(value, json_stream.NestedTooDeep):  # that one alone is not read
                where = f"{path}#[{count - 1}]"
                yield ImportRecord(source=where, kind=CONVERSATION).fail(f"{value}: not read")
            else:
                yield from reader.guarded(value, str(path))
            yield Progress(end, size, f"{path.name}: {count} conversations read")
    except json_stream.JsonStreamError as exc:
        yield _not_read(path, f"is not valid JSON ({exc})", strict)


def _not_read(path: Path, reason: str, strict: bool) -> ImportRecord:
    """A named file that cannot be read is an error; a file met in a folder is skipped."""
    if strict:
        return file_error(path, reason)
    return unread_record(str(path), f"not read: {reason}")


def _describe(payload: Any) -> str:
    if isinstance(payload, dict):
        keys = ", ".join(sorted(map(str, payload))[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(payload, list):
        return f"an array of {len(payload)} items"
    return "null" if payload is None else f"a JSON {type(payload).__name__}"


def read_chatgpt(
    path: str | Path,
    *,
    options: Any = None,
    all_branches: bool = False,
    brain_id: str | None = None,
) -> Iterator[Event]:
    """Read a ChatGPT export file or folder (see the module docstring).

    `brain_id` (else `options.target_brain_id`, else "brain") names the brain the traces are
    for: their ids hash it with their text. `options.all_branches` reads every branch, as
    `all_branches` does.
    """
    all_branches = all_branches or bool(option(options, "all_branches", False))
    brain_id = brain_id or option(options, "target_brain_id", "brain")
    source = Path(path)
    if not source.exists():
        raise InvalidArgument("path", "does not exist", str(source))
    reader = _Reader(brain_id, all_branches)
    if source.is_file():
        yield from _read_file(reader, source, strict=True)
        return
    entries = list(walk_folder(source, _is_json, "JSON file"))
    total = sum(1 for entry in entries if entry.wanted)
    done = 0
    for entry in entries:
        if not entry.wanted:
            yield unread_record(str(source / entry.relative), entry.why_unread)
            continue
        yield Progress(done, total, f"reading {entry.relative}")
        yield from _read_file(reader, Path(entry.path), strict=False)
        done += 1
    yield Progress(done, total, f"read {total} files")


def _is_json(name: str) -> bool:
    return name.lower().endswith(".json")
