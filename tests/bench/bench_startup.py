"""Cold start to a painted window: `python -m tests.bench.bench_startup [--runs 5]`.

Runs the built program (`dist/memgui/memgui`, `make package`) and, as the peer measured in
the same run, the venv's `memgui` (`make run`), each on the sample brain in a real X11
window (Xvfb). A run starts the program and reads Xvfb's screen (kept in a file) every few
milliseconds until the window shows its table: hundreds of colours where the empty screen
has one. Cold: before each cold run the program's files and the brain are dropped from the
page cache (posix_fadvise DONTNEED on every file), as after a reboot; the system's own
libraries (libc, libGL, fonts) stay cached. Warm: the run right after. Each run has a fresh
HOME (no saved settings: a first start). Prints JSON with the machine and its load.

On a machine that other work keeps busy, `--nice -10` (root) runs the app and Xvfb ahead of
that work, which is how they would run on a machine of one's own; the CPU seconds each
start spent are printed either way, and do not depend on the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support import xserver
from tests.support.paths import ROOT

PAINTED_COLOURS = 50  # the empty screen shows 1; memgui's window with its table, ~280
GIVE_UP_S = 60.0


def evict(paths: list[Path]) -> int:
    """Drop every file under `paths` from the page cache; returns how many files."""
    count = 0
    for top in paths:
        files = [top] if top.is_file() else [p for p in top.rglob("*") if p.is_file()]
        for path in files:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
    return count


def cpu_seconds(pid: int) -> float:
    """The process's own CPU time so far (user + system): what its start costs whatever
    else the machine runs."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_paint(
    argv: list[str], brain: Path, display: xserver.Display, home: Path, nice: int = 0
) -> tuple[float, float]:
    """(seconds from start to a painted window, CPU seconds the process spent by then)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "MEMGUI_", "XDG_"))}
    env.update(DISPLAY=display.name, HOME=str(home), MEMGUI_OLLAMA_URL="http://127.0.0.1:9")
    home.mkdir()
    started = time.monotonic()
    process = subprocess.Popen(
        [*argv, str(brain)],
        env=env,
        stderr=subprocess.DEVNULL,
        preexec_fn=(lambda: os.nice(nice)) if nice else None,
    )
    try:
        while xserver.screen_colours(display.framebuffer) < PAINTED_COLOURS:
            if process.poll() is not None or time.monotonic() - started > GIVE_UP_S:
                raise RuntimeError(f"{argv[0]} painted no window (exit {process.poll()})")
            time.sleep(0.005)
        return time.monotonic() - started, cpu_seconds(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=GIVE_UP_S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--program", type=Path, default=ROOT / "dist" / "memgui" / "memgui")
    parser.add_argument("--nice", type=int, default=0, help="the app's and Xvfb's niceness")
    args = parser.parse_args()
    venv_program = Path(sys.executable).with_name("memgui")
    programs = {
        "build": ([str(args.program)], [args.program.parent]),
        "venv": ([str(venv_program)], [Path(sys.prefix), ROOT / "memgui"]),
    }
    load_before = os.getloadavg()
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="memgui-start-") as scratch:
        brain = Path(scratch) / "sample.sqlite"
        subprocess.run(
            [str(args.program), "sample-brain", str(brain)], check=True, stdout=subprocess.DEVNULL
        )
        with xserver.virtual_display(nice=args.nice) as display:
            for run in range(args.runs):
                for name, (argv, files) in programs.items():
                    evict([*files, brain])
                    for kind in ("cold", "warm"):
                        home = Path(scratch) / f"home-{name}-{kind}-{run}"
                        seconds, cpu = time_to_paint(argv, brain, display, home, args.nice)
                        results.setdefault(name, {}).setdefault(kind, []).append(seconds)
                        results[name].setdefault(f"{kind}_cpu", []).append(cpu)
    print(
        json.dumps(
            {
                "machine": {
                    "platform": platform.platform(),
                    "cpu_count": os.cpu_count(),
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in os.getloadavg()],
                },
                "runs": args.runs,
                "nice": args.nice,
                "seconds": {
                    name: {
                        kind: {
                            "median": round(statistics.median(values), 3),
                            "max": round(max(values), 3),
                            "all": [round(v, 3) for v in values],
                        }
                        for kind, values in kinds.items()
                    }
                    for name, kinds in results.items()
                },
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
