"""Import and export: the one module the app and the command line use.

An import is two steps. `plan(brain, source, options=ImportOptions(...))` reads the source
with its format's reader and classifies every record against the brain (an `ImportPlan`;
each record has a `Verdict`), writing nothing; `commit(brain, plan)` writes the accepted
records in one transaction and one journal batch (an `ImportResult`, whose `changes` say
what it wrote). A person's fixes of a plan's records carry over to a new plan of the same
source (`Fixes`: collected from the old plan, laid over the new one). `export(brain, path,
format, ExportOptions(...))` writes the brain out (an `ExportResult`). All three are jobs:
generators that yield `Progress` and return their result.

Inside: `readers/` (one reader per format, registered in `READERS`), `planning/`,
`writing/`, `exporters/`, and the shared `records` (ImportRecord, Verdict, RecordKind),
`options` (ImportOptions), `detect` and `formats`.

The names of the engines load on first use (PEP 562 `__getattr__`): a `memgui` command
that only needs the format names or the verdicts does not spend the ~0.4 s of loading the
readers, the planner and the exporters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memgui.core.io.detect import detect_format
from memgui.core.io.formats import EXPORT_FORMATS, IMPORT_FORMATS
from memgui.core.io.options import ImportOptions
from memgui.core.io.records import VERDICTS, ImportRecord, RecordKind, Verdict, conversation_of

if TYPE_CHECKING:
    from memgui.core.io.exporters.export import export
    from memgui.core.io.exporters.export_common import (
        ExportIncomplete,
        ExportOptions,
        ExportResult,
        Refusal,
    )
    from memgui.core.io.planning.fixes import CarriedFixes, Fixes, fix_alike, fix_changes
    from memgui.core.io.planning.plan import ImportPlan, plan
    from memgui.core.io.readers import READERS, Reader
    from memgui.core.io.writing.commit import ImportResult, commit, count_verdicts, revalidate

_ENGINES = {
    "plan": "memgui.core.io.planning.plan",
    "ImportPlan": "memgui.core.io.planning.plan",
    "Fixes": "memgui.core.io.planning.fixes",
    "CarriedFixes": "memgui.core.io.planning.fixes",
    "fix_alike": "memgui.core.io.planning.fixes",
    "fix_changes": "memgui.core.io.planning.fixes",
    "commit": "memgui.core.io.writing.commit",
    "revalidate": "memgui.core.io.writing.commit",
    "count_verdicts": "memgui.core.io.writing.commit",
    "ImportResult": "memgui.core.io.writing.commit",
    "export": "memgui.core.io.exporters.export",
    "ExportOptions": "memgui.core.io.exporters.export_common",
    "ExportResult": "memgui.core.io.exporters.export_common",
    "ExportIncomplete": "memgui.core.io.exporters.export_common",
    "Refusal": "memgui.core.io.exporters.export_common",
    "READERS": "memgui.core.io.readers",
    "Reader": "memgui.core.io.readers",
}

__all__ = [
    "CarriedFixes",
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    "VERDICTS",
    "ExportIncomplete",
    "ExportOptions",
    "ExportResult",
    "Fixes",
    "ImportOptions",
    "ImportPlan",
    "ImportRecord",
    "ImportResult",
    "READERS",
    "Reader",
    "RecordKind",
    "Refusal",
    "Verdict",
    "commit",
    "conversation_of",
    "count_verdicts",
    "detect_format",
    "export",
    "fix_alike",
    "fix_changes",
    "plan",
    "revalidate",
]


def __getattr__(name: str) -> Any:
    module = _ENGINES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once
    return value
