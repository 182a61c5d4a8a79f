"""Every colour the app names, in one place; the palettes (palette.py) give the rest.

Each reads on both the light and the dark palette: red for errors, the verdicts' colours
of an import, the strength bar, the Ollama light.
"""

from __future__ import annotations

ERROR = "#c0392b"  # error text: a refused field, a lost file, a failed search
REFUSED = "#c62828"  # what an import refuses or drops
BLACK = "#000000"  # text on the light backgrounds below, whatever the palette

HIGHLIGHT = "#ffe08a"  # a search word in the table and the editor
THEIRS = "#f8d7d3"  # a conflict: the lines of the version on disk
MINE = "#d4f0d9"  # ... and of the unsaved edit
BANNER = "#fff3cd"  # the editor's note above its form
BANNER_TEXT = "#664d03"
FAINT = "#888888"  # a chat message's time

STRENGTH_HIGH, STRENGTH_MID, STRENGTH_LOW = "#3c9d5d", "#d19a2a", "#c0504d"

# The Ollama light in the status bar, by state.
OLLAMA = {
    "reachable": "#27ae60",
    "model missing": "#e6a700",
    "down": ERROR,
    "checking": "#8c8c8c",
    "off": "#8c8c8c",
}

# An import plan's rows, by verdict (the values of core.io.Verdict).
VERDICTS = {
    "new": "#2e7d32",
    "duplicate": "#757575",
    "update": "#1565c0",
    "refused": REFUSED,
    "error": "#ad1457",
    "skipped": "#757575",
}
DROP_OK = VERDICTS["update"]  # a drop the window will take

# The graph view: nodes coloured by type, scope or category from one qualitative palette
# (it reads on light and dark), edges by kind, and the marks drawn over nodes.
GRAPH_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
GRAPH_EDGES = {
    "relates_to": "#8a9bb0",
    "supersedes": "#d1603d",
    "caused_by": "#7e57c2",
    "graph": "#9aa36b",  # every knowledge-graph edge type
}
GRAPH_SELECTED = "#1e88e5"
GRAPH_HUB = "#37474f"
GRAPH_MORE = "#607d8b"
GRAPH_MARK = "#b71c1c"  # the strike over a superseded memory
GRAPH_LABEL_LIGHT = "#202020"
GRAPH_LABEL_DARK = "#e8e8e8"
