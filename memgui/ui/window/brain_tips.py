"""What the status bar's marks say about the open brain: read-only, and foreign triggers."""

from __future__ import annotations

from memgui.core.brain import Brain

READ_ONLY_TIP = (
    "This file cannot be written (no write permission, or read-only media): "
    "memories can be read and searched, not changed or imported"
)


def read_only_tip(brain: Brain) -> str:
    """Why the window's brain is read-only: its file's mode, or what the brain says."""
    db = getattr(brain, "db", None)  # a shared brain has no file: never read-only
    why = db.readonly_reason if db is not None else None
    if why is None:
        return READ_ONLY_TIP
    return f"This brain {why}: memories can be read and searched, not changed or imported"


def foreign_triggers_tip(brain: Brain) -> str:
    """What the triggers another program put in the brain mean for the person."""
    if not brain.foreign_triggers:
        return ""
    return (
        f"This brain holds triggers memgui did not make ({', '.join(brain.foreign_triggers)}). "
        "They run on every change to it, memgui's included, and may alter or refuse what you "
        "save; a SQLite export leaves them out."
    )
