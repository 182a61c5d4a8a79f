"""Readable (non-JSON) output of the `memgui` command: one line per trace, key/value details."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memgui.core.model import JournalEntry, Neighbour, RelatedSummary, Trace

SNIPPET_CHARS = 72


def when(epoch_ms: int | None) -> str:
    """Local time to the minute, or '-' when unset."""
    if epoch_ms is None:
        return "-"
    return datetime.fromtimestamp(epoch_ms / 1000).strftime("%Y-%m-%d %H:%M")


def snippet(text: str, width: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def scope_label(trace: Trace) -> str:
    return f"{trace.scope}:{trace.scope_id}" if trace.scope_id else trace.scope


def trace_line(trace: Trace) -> str:
    """`id  type  scope  category  strength  version  content  #tags` on one line."""
    flags = " (forgotten)" if trace.deleted else ""
    tags = "  " + " ".join(f"#{t}" for t in trace.tags) if trace.tags else ""
    return (
        f"{trace.id}  {trace.type:<11} {scope_label(trace):<16} {trace.category or '-':<12} "
        f"s={trace.strength:.2f} v{trace.version}  {snippet(trace.content)}{tags}{flags}"
    )


def trace_details(trace: Trace) -> list[str]:
    rows: list[tuple[str, Any]] = [
        ("id", trace.id),
        ("type", trace.type),
        ("scope", scope_label(trace)),
        ("category", trace.category or "-"),
        ("tags", ", ".join(trace.tags) or "-"),
        ("strength", f"{trace.strength:.3f}"),
        ("created", when(trace.created_at)),
        ("last accessed", when(trace.last_accessed)),
        ("retrievals", trace.retrieval_count),
        ("expires", when(trace.expires_at)),
        ("forgotten", "yes" if trace.deleted else "no"),
        ("version", trace.version),
    ]
    lines = [f"{key + ':':<15}{value}" for key, value in rows]
    lines.append("")
    lines.extend(trace.content.splitlines() or [""])
    return lines


def related_lines(related: Iterable[RelatedSummary], indent: str = "    ") -> list[str]:
    return [f"{indent}{r.kind} ({r.direction}) {r.id}  {r.snippet}" for r in related]


def results_lines(traces: list[Trace], related: dict[str, list[RelatedSummary]]) -> list[str]:
    if not traces:
        return ["no traces found"]
    lines: list[str] = []
    for trace in traces:
        lines.append(trace_line(trace))
        lines.extend(related_lines(related.get(trace.id, [])))
    return lines


def journal_lines(entries: Iterable[JournalEntry]) -> list[str]:
    lines = [
        f"{when(e.at)}  #{e.id}  {e.op:<10} by {e.actor:<12} batch {e.batch_id}  {e.trace_id}"
        for e in entries
    ]
    return lines or ["no history"]


def neighbour_lines(neighbours: Iterable[Neighbour]) -> list[str]:
    lines = [
        f"hop {n.hop}  {n.edge_type:<14} {n.node_type:<10} {n.node_id}  {snippet(n.label, 60)}"
        for n in neighbours
    ]
    return lines or ["no neighbours"]


def mapping_lines(mapping: dict[str, Any]) -> list[str]:
    width = max((len(k) for k in mapping), default=0) + 2
    out = []
    for key, value in mapping.items():
        if isinstance(value, list | tuple | set | frozenset):
            value = ", ".join(str(v) for v in value) or "-"
        out.append(f"{key + ':':<{width}}{value}")
    return out
