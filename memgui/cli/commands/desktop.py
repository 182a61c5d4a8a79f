"""`memgui install-desktop`: memgui in the person's desktop (freedesktop.org, XDG paths).

It writes, for this user only and without root:
- `$XDG_DATA_HOME/applications/io.memgui.memgui.desktop`: the menu entry, its `Exec` the
  memgui that runs this command (the frozen build, or the venv's `memgui`);
- `$XDG_DATA_HOME/metainfo/io.memgui.memgui.metainfo.xml`: what software centres show;
- the app icon at every size in `$XDG_DATA_HOME/icons/hicolor/`;
- in `$XDG_CONFIG_HOME/mimeapps.list`, memgui as the program that opens SQLite files
  (`application/vnd.sqlite3`, which `.sqlite`, `.sqlite3` and `.db` brains are by their
  first bytes), unless another program already is and `--default` is not given.

`--uninstall` removes what it wrote. The files come from the package's
`resources/desktop/` (masters in `packaging/linux/`, copied by `make resources`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from memgui import APP_ID
from memgui.cli.registry import CommandContext, command

DESKTOP_DATA = Path(__file__).resolve().parents[2] / "resources" / "desktop"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
SQLITE_TYPES = ("application/vnd.sqlite3", "application/x-sqlite3")
DEFAULTS, ADDED = "Default Applications", "Added Associations"


def xdg_home(variable: str, fallback: str) -> Path:
    """An XDG base folder: the variable when it is an absolute path, else the fallback."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path.home() / fallback


def program_command() -> list[str]:
    """The command that starts this memgui: the frozen program, the `memgui` script this
    process runs as, or this Python with `-m memgui`."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve())]
    script = Path(sys.argv[0]).absolute() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "memgui" and script.is_file():
        return [str(script)]
    return [str(Path(sys.executable).absolute()), "-m", "memgui"]


def quoted_exec(argv: list[str]) -> str:
    """`argv` as a desktop entry's Exec value (the spec's quoting: double quotes around an
    argument with a reserved character, and `\\`, `"`, `` ` ``, `$` escaped inside)."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`")
    parts = []
    for arg in argv:
        if set(arg) & reserved:
            escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
            arg = f'"{escaped}"'
        parts.append(arg.replace("%", "%%"))
    return " ".join(parts)


def desktop_entry(argv: list[str]) -> str:
    """The packaged desktop entry with `Exec` and `TryExec` naming this memgui."""
    lines = []
    for line in (DESKTOP_DATA / f"{APP_ID}.desktop").read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={quoted_exec(argv)} %f"
        elif line.startswith("TryExec="):
            line = f"TryExec={argv[0]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def installed_files(data_home: Path) -> dict[Path, Path | None]:
    """Each file this command installs and the package file it copies (None: made here)."""
    files: dict[Path, Path | None] = {
        data_home / "applications" / f"{APP_ID}.desktop": None,
        data_home / "metainfo" / f"{APP_ID}.metainfo.xml": DESKTOP_DATA / f"{APP_ID}.metainfo.xml",
        data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg": DESKTOP_DATA.parent
        / "icons"
        / "memgui.svg",
    }
    for size in ICON_SIZES:
        folder = data_home / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        files[folder / f"{APP_ID}.png"] = DESKTOP_DATA / "icons" / f"memgui-{size}.png"
    return files


# --- mimeapps.list ------------------------------------------------------------------------


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """The file as (section name, its lines), comments and unknown lines kept."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            sections.append((stripped[1:-1], []))
        else:
            sections[-1][1].append(line)
    return sections


def _values(lines: list[str], key: str) -> list[str] | None:
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            return [v for v in value.strip().split(";") if v]
    return None


def _set_values(lines: list[str], key: str, values: list[str]) -> None:
    text = f"{key}={';'.join(values)};" if values else None
    for i, line in enumerate(lines):
        name, sep, _ = line.partition("=")
        if sep and name.strip() == key:
            if text is None:
                del lines[i]
            else:
                lines[i] = text
            return
    if text is not None:
        lines.append(text)


def _section(sections: list[tuple[str, list[str]]], name: str) -> list[str]:
    for title, lines in sections:
        if title == name:
            return lines
    sections.append((name, []))
    return sections[-1][1]


def associate(mimeapps: Path, desktop_id: str, *, make_default: bool) -> list[str]:
    """Add `desktop_id` as a program for SQLite files in `mimeapps`; make it the default
    where none is set (or always with `make_default`). Returns the types it is default for."""
    sections = _sections(mimeapps.read_text(encoding="utf-8") if mimeapps.exists() else "")
    defaults, added = _section(sections, DEFAULTS), _section(sections, ADDED)
    default_for = []
    for mime in SQLITE_TYPES:
        programs = _values(added, mime) or []
        _set_values(added, mime, [desktop_id] + [p for p in programs if p != desktop_id])
        current = _values(defaults, mime) or []
        if make_default or not current or current[0] == desktop_id:
            _set_values(defaults, mime, [desktop_id] + [p for p in current if p != desktop_id])
            default_for.append(mime)
    _write_sections(mimeapps, sections)
    return default_for


def dissociate(mimeapps: Path, desktop_id: str) -> None:
    if not mimeapps.exists():
        return
    sections = _sections(mimeapps.read_text(encoding="utf-8"))
    for _title, lines in sections[1:]:
        for mime in SQLITE_TYPES:
            programs = _values(lines, mime)
            if programs is not None:
                _set_values(lines, mime, [p for p in programs if p != desktop_id])
    _write_sections(mimeapps, sections)


def _write_sections(path: Path, sections: list[tuple[str, list[str]]]) -> None:
    out = list(sections[0][1])
    for title, lines in sections[1:]:
        out.append(f"[{title}]")
        out.extend(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out).strip("\n") + "\n", encoding="utf-8")


# --- the command --------------------------------------------------------------------------


def _refresh_caches(data_home: Path) -> None:
    """Tell the desktop (when its tools are there): the menu's MIME cache, the icon cache."""
    tools = (
        ["update-desktop-database", "-q", str(data_home / "applications")],
        ["gtk-update-icon-cache", "-q", "-t", "-f", str(data_home / "icons" / "hicolor")],
    )
    for argv in tools:
        if shutil.which(argv[0]):
            subprocess.run(argv, check=False, capture_output=True)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--default",
        action="store_true",
        help="open SQLite files with memgui even when another program is their default",
    )
    parser.add_argument("--uninstall", action="store_true", help="remove what it installed")


@command(
    "install-desktop",
    "add memgui to this user's desktop: menu entry, icon, opening .sqlite brains",
    configure=_configure,
)
def run_install_desktop(ctx: CommandContext, args: argparse.Namespace) -> None:
    data_home = xdg_home("XDG_DATA_HOME", ".local/share")
    mimeapps = xdg_home("XDG_CONFIG_HOME", ".config") / "mimeapps.list"
    files = installed_files(data_home)
    desktop_id = f"{APP_ID}.desktop"
    if args.uninstall:
        removed = [str(p) for p in files if p.exists()]
        for path in files:
            path.unlink(missing_ok=True)
        dissociate(mimeapps, desktop_id)
        _refresh_caches(data_home)
        ctx.emit({"removed": removed}, f"removed {len(removed)} file(s) of memgui's desktop entry")
        return
    argv = program_command()
    for target, source in files.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_text(desktop_entry(argv), encoding="utf-8")
        else:
            shutil.copyfile(source, target)
    default_for = associate(mimeapps, desktop_id, make_default=args.default)
    _refresh_caches(data_home)
    doc = {
        "installed": [str(p) for p in files],
        "exec": argv,
        "default_for": default_for,
        "mimeapps": str(mimeapps),
    }
    lines = [f"installed {len(files)} file(s) under {data_home}", f"Exec: {quoted_exec(argv)}"]
    if default_for:
        lines.append(f"opens SQLite files by default ({', '.join(default_for)})")
    else:
        lines.append("another program opens SQLite files by default; memgui is in Open With")
    ctx.emit(doc, lines)
