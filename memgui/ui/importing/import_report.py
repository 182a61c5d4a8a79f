"""Refusal reports: what an import or export left out and why, saved as CSV or JSON.

An import report lists every refused and error record of the plan (source, kind, verdict,
field, reason, value) and then the files the reader did not read. An export report lists
the traces the exporter refused (id, field, problem). The file's suffix picks the format;
the file is written whole next to its destination and renamed, so a failed save leaves no
half-written report behind.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io import ImportPlan, Refusal, Verdict

IMPORT_COLUMNS = ("source", "kind", "verdict", "field", "reason", "value")
EXPORT_COLUMNS = ("id", "field", "problem")
NOT_READ = "not read"
REPORT_FILTER = "CSV (*.csv);;JSON (*.json)"


def _value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def import_refusals(plan: ImportPlan) -> list[dict[str, str]]:
    """The plan's refused and error records, then the files it did not read."""
    rows = [
        {
            "source": r.source,
            "kind": r.kind,
            "verdict": r.verdict,
            "field": r.problem_field or "",
            "reason": r.reason,
            "value": _value_text(r.value),
        }
        for r in plan.records
        if r.verdict in (Verdict.REFUSED, Verdict.ERROR)
    ]
    rows.extend(
        {
            "source": r.source,
            "kind": r.kind,
            "verdict": NOT_READ,
            "field": "",
            "reason": r.reason,
            "value": "",
        }
        for r in plan.not_read
    )
    return rows


def export_refusals(refused: Iterable[Refusal]) -> list[dict[str, str]]:
    return [{"id": r.id, "field": r.field, "problem": r.problem} for r in refused]


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise InvalidArgument("path", f"must end in .csv or .json (got '{path.name}')", str(path))
    return suffix[1:]


def render(rows: Sequence[dict[str, str]], columns: Sequence[str], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(list(rows), ensure_ascii=False, indent=2) + "\n"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def save_rows(rows: Sequence[dict[str, str]], columns: Sequence[str], path: str | Path) -> Path:
    """Write `rows` to `path` (.csv or .json) atomically; returns the path written."""
    target = Path(path)
    text = render(rows, columns, _format_of(target))
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8", newline="")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def save_import_report(plan: ImportPlan, path: str | Path) -> Path:
    return save_rows(import_refusals(plan), IMPORT_COLUMNS, path)


def save_export_report(refused: Iterable[Refusal], path: str | Path) -> Path:
    return save_rows(export_refusals(refused), EXPORT_COLUMNS, path)
