"""Build the one-folder memgui (`make package` runs it in the build's own venv).

    build/package/venv/bin/python packaging/build.py

1. PyInstaller freezes `memgui.spec` into `dist/memgui/` (the program `dist/memgui/memgui`,
   Python, Qt and the libraries under `_internal/`); its working files go to
   `build/package/work`.
2. The licence report (`licences.py`) is written into the folder: `LICENCES.md`,
   `licences.json`, `licences/`. A GPL-only component fails the build.
3. The folder is packed as the download, `dist/memgui-<version>-linux-<machine>.tar.gz`.
4. `dist/build-info.json` records the version, the sizes and how long the build took.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIST = ROOT / "dist"
WORK = ROOT / "build" / "package" / "work"
APP_DIR = DIST / "memgui"
sys.path.insert(0, str(HERE))

from licences import components, write_report  # noqa: E402


def folder_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_dir())


def pack(folder: Path, archive: Path) -> None:
    """`folder` as a .tar.gz that unpacks to one `memgui/` folder (links kept as links)."""
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=folder.name)
    partial.replace(archive)


def strip_python(manifest: dict) -> int:
    """Strip the debug symbols of the build machine's Python (its shared library and the
    standard library's extensions), which a Python built from source keeps; returns how many
    bytes that saved. Nothing else: wheels' libraries come stripped, and strip breaks some."""
    python_home = Path(sys.base_prefix).resolve()
    saved = 0
    for dest, source, kind in manifest["binaries"]:
        if kind == "SYMLINK" or python_home not in Path(source).resolve().parents:
            continue
        target = APP_DIR / "_internal" / dest
        before = target.stat().st_size
        subprocess.run(["strip", "--strip-debug", str(target)], check=True)
        saved += before - target.stat().st_size
    return saved


def main() -> int:
    import PyInstaller
    import PyInstaller.__main__

    from memgui import __version__

    started = time.monotonic()
    shutil.rmtree(APP_DIR, ignore_errors=True)
    PyInstaller.__main__.run(
        [
            str(HERE / "memgui.spec"),
            "--noconfirm",
            "--log-level=WARN",
            f"--distpath={DIST}",
            f"--workpath={WORK}",
        ]
    )
    frozen_s = time.monotonic() - started
    manifest = json.loads((WORK / "memgui" / "bundle-manifest.json").read_text())
    stripped = strip_python(manifest)
    report = write_report(components(manifest, PyInstaller.__version__), APP_DIR)
    shutil.copyfile(HERE / "linux" / "README-download.txt", APP_DIR / "README.txt")
    archive = DIST / f"memgui-{__version__}-linux-{platform.machine()}.tar.gz"
    pack(APP_DIR, archive)
    info = {
        "version": __version__,
        "folder": str(APP_DIR.relative_to(ROOT)),
        "archive": str(archive.relative_to(ROOT)),
        "folder_bytes": folder_bytes(APP_DIR),
        "archive_bytes": archive.stat().st_size,
        "stripped_bytes": stripped,
        "freeze_s": round(frozen_s, 1),
        "total_s": round(time.monotonic() - started, 1),
        "pyinstaller": PyInstaller.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    (DIST / "build-info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(
        f"built {APP_DIR.relative_to(ROOT)} ({info['folder_bytes'] / 1e6:.0f} MB) and "
        f"{archive.relative_to(ROOT)} ({info['archive_bytes'] / 1e6:.0f} MB) in "
        f"{info['total_s']:.0f} s; licences: {report.relative_to(ROOT)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
