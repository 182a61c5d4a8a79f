"""Running a command as a user that file permissions apply to, for tests of unreadable and
unwritable paths: root reads and writes anything unless its override capabilities go."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

CAPS = "-dac_override,-dac_read_search"


@functools.cache
def honouring_permissions() -> list[str] | None:
    """The prefix that makes a command honour file permissions: [] for a normal user,
    `setpriv` dropping root's overrides, or None when that cannot be had here."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, f"--inh-caps={CAPS}", f"--bounding-set={CAPS}"]
    tried = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    return prefix if tried.returncode == 0 else None


NO_PERMISSIONS_REASON = "root here cannot drop its override of file permissions (setpriv)"


def memgui_honouring_permissions(
    brain: Path, *argv: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """`memgui --brain BRAIN ARGV...` in a child that file permissions apply to."""
    command = [sys.executable, "-m", "memgui", "--brain", str(brain), *argv]
    prefix = honouring_permissions() or []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=60, cwd=cwd)
