"""A virtual X display (Xvfb) for running the app in a real X11 window, and a look at what
it shows: Xvfb keeps its screen in a file (`-fbdir`, XWD format) that is read directly."""

from __future__ import annotations

import os
import select
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

READY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Display:
    name: str  # for DISPLAY, e.g. ":3"
    framebuffer: Path  # the screen, as an XWD file Xvfb keeps up to date


def available() -> bool:
    return shutil.which("Xvfb") is not None


@contextmanager
def virtual_display(width: int = 1280, height: int = 1024, nice: int = 0) -> Iterator[Display]:
    """Start Xvfb on a free display number (it says which when it is ready), stop it after;
    `nice` (below 0: root only) for a benchmark that runs it ahead of other work."""
    scratch = Path(tempfile.mkdtemp(prefix="memgui-xvfb-"))
    read_end, write_end = os.pipe()
    screen = f"{width}x{height}x24"
    argv = ["Xvfb", "-displayfd", str(write_end), "-screen", "0", screen]
    argv += ["-fbdir", str(scratch), "-nolisten", "tcp", "-br"]  # -br: a black root window
    process = subprocess.Popen(
        argv,
        pass_fds=(write_end,),
        stderr=subprocess.DEVNULL,
        preexec_fn=(lambda: os.nice(nice)) if nice else None,
    )
    os.close(write_end)
    try:
        number = _read_display_number(read_end)
        if number is None:
            raise RuntimeError(f"Xvfb did not start within {READY_TIMEOUT_S:.0f} s")
        yield Display(f":{number}", scratch / "Xvfb_screen0")
    finally:
        os.close(read_end)
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


def _read_display_number(fd: int) -> str | None:
    text = b""
    while not text.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], READY_TIMEOUT_S)
        if not ready:
            return None
        chunk = os.read(fd, 64)
        if not chunk:
            return None
        text += chunk
    return text.decode().strip()


def screen_colours(framebuffer: Path, every: int = 4) -> int:
    """How many distinct colours the screen shows, reading every `every`-th row and column
    (a black root: 1; a window with text: hundreds)."""
    data = framebuffer.read_bytes()
    header_size, _version, _format, _depth, width, height = struct.unpack(">6I", data[:24])
    bytes_per_line = struct.unpack(">I", data[48:52])[0]
    colour_count = struct.unpack(">I", data[76:80])[0]
    pixels = header_size + colour_count * 12
    seen = set()
    for y in range(0, height, every):
        row = data[pixels + y * bytes_per_line : pixels + y * bytes_per_line + width * 4]
        seen.update(row[x : x + 3] for x in range(0, len(row), 4 * every))
    return len(seen)
