"""The core's refusals in the words of the form a person types in.

The core names its parameters (`ttl_secs must be between 1 and 3155760000`); under a field
of the editor the message names the field as its label does and its bounds in the units
the field takes ("Expires in must be between 1 second and 100 years").
"""

from __future__ import annotations

from memgui.core.errors import InvalidArgument
from memgui.core.model import MAX_TTL_SECS, MIN_TTL_SECS

LABELS = {"content": "Content", "tags": "Tags", "ttl_secs": "Expires in", "title": "Title"}
SECONDS_PER_YEAR = 31_557_600  # a Julian year, as the core's bound (100 of them) is counted


def _span(seconds: int) -> str:
    if seconds % SECONDS_PER_YEAR == 0:
        years = seconds // SECONDS_PER_YEAR
        return f"{years} year{'s' if years != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


TTL_RANGE = f"must be between {_span(MIN_TTL_SECS)} and {_span(MAX_TTL_SECS)}"


def in_field_words(exc: InvalidArgument, label: str | None = None) -> str:
    """`exc` as a form says it under its field (`label`: the field's caption, when it is
    not the editor's)."""
    field = exc.field.split("[", 1)[0]
    label = label or LABELS.get(field, field.replace("_", " ").capitalize())
    problem = exc.problem
    if field == "ttl_secs" and isinstance(exc.value, int) and problem.startswith("must be between"):
        return f"{label} {TTL_RANGE} (got {exc.value:,} seconds)"
    if field == "tags" and exc.field != field:  # one tag of several: say which
        position = exc.field[len(field) + 1 : -1]
        if position.isdigit():
            return f"{label}: tag {int(position) + 1} {problem}"
    return f"{label} {problem}"
