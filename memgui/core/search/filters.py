"""The SQL of the filters every listing and search shares (type, scope, tags, the trash...)."""

from __future__ import annotations

from typing import Any

from memgui.core.model import TraceFilter
from memgui.core.storage.db import Database


def filter_sql(
    db: Database, brain_id: str, flt: TraceFilter, alias: str = "t."
) -> tuple[str, list[Any]]:
    clauses = [f"{alias}brain_id = ?"]
    params: list[Any] = [brain_id]
    if flt.deleted:
        clauses.append(f"{alias}deleted != 0")
    elif not flt.include_deleted:
        clauses.append(f"{alias}deleted = 0")
    for name in ("type", "scope", "category"):
        value = getattr(flt, name)
        if value is not None:
            if name == "category" and "category" not in db.trace_columns:
                clauses.append("0")
                continue
            clauses.append(f"{alias}{name} = ?")
            params.append(value)
    if flt.scope_id is not None:
        if "scope_id" in db.trace_columns:
            clauses.append(f"{alias}scope_id = ?")
        else:
            clauses.append(
                f"coalesce(CASE WHEN json_valid({alias}metadata) THEN "
                f"json_extract({alias}metadata, '$.scopeId') END, '') = ?"
            )
        params.append(flt.scope_id)
    if flt.tag is not None:
        clauses.append(
            f"EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid({alias}tags) "
            f"THEN {alias}tags ELSE '[]' END) WHERE value = ?)"
        )
        params.append(flt.tag)
    return " AND ".join(clauses), params
