"""Markdown and Obsidian exports: one note per live trace, where it came from.

A memory imported from a note goes back to that note's path, one with a title is named by
it, any other goes to `{scope}/{type}/{id}.md` (`export_names`). Front matter in AgentOS's
order (`id, type, scope, strength, tags, createdAt`), then memgui's fields (`scopeId` when
the trace has one, `scopeIdForm`, `turnUserId`, `category`, `title` when the file's name is
not the title), then the note's own properties the import kept (`front_matter`: aliases,
cssclasses…); then the content verbatim with a final line break added when it has none. The
front matter is written by this module, not merged with the content, so a text that itself
begins with a `---` block stays in the body (AgentOS's export absorbs it into the front
matter). Every string that is not a plain word is written double-quoted with escapes, so an
id such as `0123`, `true` or one holding a line break reads back as the same text.

The Obsidian export appends, a blank line apart, the tag line (`#tag`, whitespace as `-`)
and a **Related:** list of `[[label]]` for the knowledge-graph edges leaving the trace (its
id, or a node whose `properties.trace_id` names it), in this brain only; a label the text
links to already (a vault note's own wikilinks) is not listed again.

Names are checked and files written by `export_paths` (no file outside the folder, no link
followed, one file open at a time); a trace that cannot be written safely is returned in
`refused`. Forgotten traces are not exported; when the selection named one, it is refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
import yaml

from memgui.core.io.exporters.export_common import (
    ExportIncomplete,
    ExportOptions,
    ExportResult,
    Refusals,
    close_snapshot,
    open_snapshot,
    refuse_missing,
    select_traces,
    tables,
    trace_select,
)
from memgui.core.io.exporters.export_names import NoteNames, NotePlace, source_path
from memgui.core.io.exporters.export_paths import ContainedFolder, Skip, name_problem
from memgui.core.model import TITLE_KEY
from memgui.core.progress import Job, Progress
from memgui.core.storage import store

if TYPE_CHECKING:
    from memgui.core.brain import Brain

PROGRESS_EVERY = 25  # notes: a file each, tens of ms on a busy disk; the bar moves at once
# Words, dots and dashes, single spaces between: YAML reads these plain, as text (a leading
# digit would read as a number; `yes`, `null`… are checked apart).
_PLAIN = re.compile(r"[^\W\d][\w.-]*(?: [\w.-]+)*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's when it is there
# Front-matter keys this module writes itself: a kept property of the same name is not.
_OURS = frozenset(
    {"id", "type", "scope", "strength", "tags", "createdAt", "scopeId", "scopeIdForm"}
    | {"turnUserId", "category"}
)
# Characters YAML may not hold raw, or folds as line breaks inside a quoted scalar.
_YAML_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")

# The labels of the knowledge-graph nodes each trace's edges lead to (Obsidian only). CROSS
# JOIN keeps the trace's nodes outermost: left to itself the planner walked every edge of
# the brain for each trace (37 s for the 2,471 notes of the obsidian-help vault).
_RELATED_SQL = """(
  SELECT json_group_array(label ORDER BY at, edge) FROM (
    SELECT n.label AS label, e.created_at AS at, e.id AS edge
    FROM knowledge_edges e JOIN knowledge_nodes n ON n.brain_id = e.brain_id AND n.id = e.target_id
    WHERE e.brain_id = memory_traces.brain_id AND e.source_id = memory_traces.id
    UNION ALL
    SELECT n.label, e.created_at, e.id
    FROM temp.export_trace_nodes tn
    CROSS JOIN knowledge_edges e
      ON e.brain_id = memory_traces.brain_id AND e.source_id = tn.node_id
    CROSS JOIN knowledge_nodes n ON n.brain_id = e.brain_id AND n.id = e.target_id
    WHERE tn.trace_id = memory_traces.id AND tn.node_id != memory_traces.id
  )
)"""


def yaml_text(value: str) -> str:
    """A YAML scalar that reads back as exactly `value` (a string)."""
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    quoted = json.dumps(value, ensure_ascii=False)
    return _YAML_ESCAPE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", quoted)


def yaml_number(value: float | int) -> str:
    """A number YAML 1.1 reads as one (`1e-05` would read as text: it needs `1.0e-05`)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    mantissa, _, exponent = repr(value).partition("e")
    if not exponent:
        return mantissa
    if "." not in mantissa:
        mantissa += ".0"
    sign = "" if exponent[0] in "+-" else "+"
    return f"{mantissa}e{sign}{exponent}"


def _own_properties(meta: dict[str, Any], has_title: bool) -> list[str]:
    """The note's own front-matter properties an import kept, as YAML lines."""
    kept = meta.get("front_matter")
    if not isinstance(kept, dict):
        return []
    lines: list[str] = []
    for key, value in kept.items():
        if not isinstance(key, str) or key in _OURS or (key == TITLE_KEY and has_title):
            continue
        try:
            dumped = yaml.dump(
                {key: value},
                Dumper=_YAML_DUMPER,
                allow_unicode=True,
                sort_keys=False,
                default_flow_style=False,
            )
        except yaml.YAMLError:
            continue  # not a value YAML can write: left out, as AgentOS leaves metadata out
        lines.extend(dumped.rstrip("\n").split("\n"))
    return lines


def front_matter(snap: dict[str, Any], place: NotePlace | None = None) -> str:
    lines = [
        "---",
        f"id: {yaml_text(snap['id'])}",
        f"type: {yaml_text(snap['type'])}",
        f"scope: {yaml_text(snap['scope'])}",
        f"strength: {yaml_number(snap['strength'])}",
    ]
    if snap["tags"]:
        lines.append("tags:")
        lines.extend(f"  - {yaml_text(tag)}" for tag in snap["tags"])
    else:
        lines.append("tags: []")
    lines.append(f"createdAt: {int(snap['created_at'])}")
    meta = snap["metadata"]
    if snap["scope_id"]:
        lines.append(f"scopeId: {yaml_text(snap['scope_id'])}")
        if meta.get("scopeIdForm") == "encoded":
            lines.append("scopeIdForm: encoded")
    turn_user = meta.get("turnUserId")
    if isinstance(turn_user, str) and turn_user:
        lines.append(f"turnUserId: {yaml_text(turn_user)}")
    if snap["category"]:
        lines.append(f"category: {yaml_text(snap['category'])}")
    title = place.title if place is not None else None
    if (
        place is not None and title and title != place.stem
    ):  # the file's name is read as the title otherwise
        lines.append(f"{TITLE_KEY}: {yaml_text(title)}")
    lines.extend(_own_properties(meta, bool(title)))
    lines.append("---")
    return "\n".join(lines) + "\n"


def obsidian_trailer(tags: list[str], labels: list[str]) -> str:
    """What the Obsidian export appends to a trace's text: tag line, then **Related:**."""
    out = ""
    if tags:
        out += "\n\n" + " ".join("#" + re.sub(r"\s+", "-", tag) for tag in tags)
    if labels:
        out += "\n\n**Related:**\n" + "\n".join(f"- [[{label}]]" for label in labels)
    return out


def note_text(
    snap: dict[str, Any], obsidian: bool, labels: list[str], place: NotePlace | None = None
) -> str:
    body = snap["content"]
    if obsidian:
        unlinked = [label for label in labels if not _links_to(body, label)]
        body += obsidian_trailer(snap["tags"], unlinked)
    if not body.endswith("\n"):
        body += "\n"
    return front_matter(snap, place) + body


def _links_to(text: str, label: str) -> bool:
    """Whether `text` holds a wikilink to `label` (`[[label]]`, with an alias or a heading)."""
    if "[[" not in text:
        return False
    return any(f"[[{label}{end}" in text for end in ("]]", "|", "#", "\\|"))


def _labels(raw: Any) -> list[str]:
    if not isinstance(raw, str):
        return []
    labels = [label for label in json.loads(raw) if isinstance(label, str) and label]
    return list(dict.fromkeys(labels))


def _why_not(snap: dict[str, Any], place: NotePlace) -> tuple[str, str] | None:
    named_by = ("scope", "type", "id") if place.fields == ("scope", "type") else ()
    for field in named_by:  # the names of its folders and file
        problem = name_problem(snap[field])
        if problem is not None:
            return field, problem
    if not isinstance(snap["content"], str):
        return "content", "is not text"
    texts = {"content": [snap["content"]], "tags": snap["tags"], "scope_id": [snap["scope_id"]]}
    for field, values in texts.items():
        try:
            for value in values:
                value.encode("utf-8")
        except UnicodeEncodeError:
            return field, "is not valid Unicode (holds a lone surrogate)"
    return None


def _graph_ready(conn: apsw.Connection, brain_id: str) -> bool:
    present = tables(conn)
    if not {"knowledge_edges", "knowledge_nodes"} <= present:
        return False
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_trace_nodes (node_id TEXT, trace_id TEXT)")
    conn.execute(
        "INSERT INTO temp.export_trace_nodes SELECT id, json_extract(properties, '$.trace_id') "
        "FROM knowledge_nodes WHERE brain_id = ? AND json_valid(properties) "
        "AND json_type(properties, '$.trace_id') = 'text'",
        (brain_id,),
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS temp.export_trace_nodes_t ON export_trace_nodes (trace_id)"
    )
    return True


def _source_paths(
    conn: apsw.Connection, where: str, params: Sequence[Any]
) -> Iterator[tuple[str, ...]]:
    """The note paths the exported memories came from (read before any note is named, so
    that they keep them and a title never takes one)."""
    rows = conn.execute(
        "SELECT json_extract(metadata, '$.source_file') FROM memory_traces "
        f"WHERE {where} AND deleted = 0 AND json_valid(metadata) "
        "AND json_type(metadata, '$.source_file') = 'text'",
        params,
    )
    for (raw,) in rows:
        try:
            parts = source_path({"source_file": raw})
        except Skip:
            continue
        if parts is not None:
            yield parts


def export_markdown(
    brain: Brain, dest: str | Path, options: ExportOptions, *, obsidian: bool = False
) -> Job[ExportResult]:
    """Write one note per live trace below the folder `dest` (see the module docstring)."""
    what = "Obsidian" if obsidian else "Markdown"
    refusals = Refusals()
    conn = open_snapshot(brain.path)
    failures: list[str] = []
    exported = 0
    try:
        selected = select_traces(conn, brain.brain_id, options.selection)
        refuse_missing(refusals, selected)
        total = conn.execute(
            f"SELECT count(*) FROM memory_traces WHERE {selected.where}", selected.params
        ).get
        yield Progress(0, total, f"exporting {total} traces as {what} notes")
        names = NoteNames(_source_paths(conn, selected.where, selected.params))
        related = _RELATED_SQL if obsidian and _graph_ready(conn, brain.brain_id) else "NULL"
        sql = (
            f"SELECT {trace_select(conn)}, {related} FROM memory_traces WHERE {selected.where} "
            "ORDER BY created_at, id"  # the older of two colliding traces is the one written
        )
        with ContainedFolder(Path(dest)) as folder:
            if obsidian:  # a vault has one; the import finds the folder to be a vault by it
                folder.make_marker_folder(".obsidian")
            for done, row in enumerate(conn.execute(sql, selected.params), start=1):
                if done % PROGRESS_EVERY == 0:
                    yield Progress(done, total, f"{what}: {done} of {total} traces")
                snap = store.row_to_snapshot(row)
                if snap["deleted"]:
                    if selected.limited:
                        refusals.add(snap["id"], "deleted", "is forgotten; notes hold live traces")
                    continue
                try:
                    place = names.place(snap)
                except Skip as skip:
                    refusals.add(snap["id"], skip.field, skip.problem)
                    continue
                why = _why_not(snap, place)
                if why is not None:
                    refusals.add(snap["id"], *why)
                    continue
                try:
                    data = note_text(snap, obsidian, _labels(row[-1]), place).encode("utf-8")
                except UnicodeEncodeError:  # a label of its graph, or its turnUserId
                    refusals.add(snap["id"], "text", "is not valid Unicode (a lone surrogate)")
                    continue
                try:
                    folder.write(place.folders, place.fields, place.name, data, key=snap["id"])
                except Skip as skip:
                    refusals.add(snap["id"], skip.field, skip.problem)
                    continue
                except OSError as error:
                    failures.append(f"{snap['id']}: {error.strerror or error}")
                    refusals.add(snap["id"], "file", f"could not be written: {error.strerror}")
                    continue
                exported += 1
            # The last chance to cancel, before any note takes its place; no yield after.
            yield Progress(total, total, f"exported {exported} {what} notes")
            # Moving every note into place takes a while on a busy disk: said, not a still bar.
            yield Progress(exported, None, f"putting {exported} notes in their folders")
            for trace_id, refused in folder.finish():
                refusals.add(trace_id, refused.field, refused.problem)
                exported -= 1
    finally:
        close_snapshot(conn)
    result = refusals.result(exported)
    if failures:
        raise ExportIncomplete(result, len(failures), failures[0])
    return result
