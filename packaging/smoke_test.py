"""Run the built memgui, not this tree: `python packaging/smoke_test.py dist/memgui`.

Every check starts the frozen program as a person would, from a scratch folder, with an
environment that names nothing of this tree (no PYTHONPATH, no Qt or library paths), and
reads what it printed, drew or wrote. It needs only the standard library (and the fake
Ollama server and Xvfb helper of tests/support/). Exit status 0 when every check passed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "packaging"))

from bundle import QT_PLUGINS, keeps_plugin  # noqa: E402
from smoke_desktop import check_desktop_integration  # noqa: E402

from tests.support import xserver  # noqa: E402
from tests.support.ollama_server import FakeOllama  # noqa: E402

TIMEOUT_S = 120
UNUSED_QT = ("Qml", "Quick", "Pdf", "WebEngine", "Multimedia", "3D", "VirtualKeyboard", "Network")


class Artefact:
    """The built folder, and a clean way to run its program."""

    def __init__(self, folder: Path, scratch: Path) -> None:
        self.folder = folder.resolve()
        self.program = self.folder / "memgui"
        self.scratch = scratch
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PYTHON", "QT_", "LD_", "VIRTUAL_ENV", "MEMGUI_", "XDG_"))
        }
        self.env.update(
            HOME=str(scratch / "home"),
            QT_QPA_PLATFORM="offscreen",
            MEMGUI_OLLAMA_URL="http://127.0.0.1:9",  # nothing there: Ollama is "down"
        )
        self.env.pop("DISPLAY", None)
        (scratch / "home").mkdir()

    def run(self, *args: str, env: dict | None = None, stdin: str | None = None):
        return subprocess.run(
            [str(self.program), *args],
            cwd=self.scratch,
            env=env or self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )

    def ok(self, *args: str, env: dict | None = None) -> str:
        done = self.run(*args, env=env)
        if done.returncode != 0:
            raise AssertionError(f"memgui {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# --- the checks ---------------------------------------------------------------------------


def check_version(app: Artefact) -> str:
    found = json.loads(app.ok("--version", "--json"))
    expected = json.loads((app.folder.parent / "build-info.json").read_text())["version"]
    assert found["memgui"] == expected, found
    assert found["schema"]["memgui"]["writes"] >= 2, found
    assert re.fullmatch(r"v\d+\.\d+\.\d+", found["sqlite_vec"]), f"sqlite-vec: {found}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", found["qt"]), f"Qt: {found}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", found["sqlite"]), found
    assert found["keyword_ranking"] == "memgui_bm25", f"keyword ranking: {found}"
    text = app.ok("--version")
    assert text.startswith(f"memgui {expected}\n") and "sqlite-vec v" in text, text
    return f"memgui {found['memgui']}, Qt {found['qt']}, sqlite-vec {found['sqlite_vec']}"


def check_screenshot(app: Artefact) -> str:
    brain = app.scratch / "sample.sqlite"
    app.ok("sample-brain", str(brain))
    shot = app.scratch / "main.png"
    env = dict(app.env, QT_DEBUG_PLUGINS="1")
    done = app.run("screenshot", str(brain), str(shot), "--size", "1280x800", env=env)
    assert done.returncode == 0, done.stderr
    assert png_size(shot) == (1280, 800), png_size(shot)
    assert shot.stat().st_size > 50_000, "the screenshot looks empty"
    loaded = set(re.findall(r'"([^"]+/plugins/[^"]+)" loaded library', done.stderr))
    assert any("libqoffscreen" in p for p in loaded), "the offscreen platform plugin did not load"
    assert any("libqsvgicon" in p for p in loaded), "the SVG icon plugin did not load"
    outside = [p for p in loaded if not p.startswith(str(app.folder))]
    assert not outside, f"Qt loaded plugins from outside the build: {outside}"
    return f"{shot.stat().st_size // 1024} KiB PNG; Qt plugins, all from the build: {len(loaded)}"


def check_mcp(app: Artefact) -> str:
    brain = app.scratch / "sample.sqlite"
    process = subprocess.Popen(
        [str(app.program), "--brain", str(brain), "serve-mcp", "--maintenance-interval", "3600"],
        cwd=app.scratch,
        env=app.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None

    def call(message: dict) -> dict | None:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline()) if "id" in message else None

    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "0"},
    }
    try:
        started = call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        assert started and started["result"]["serverInfo"]["name"] == "memgui", started
        call({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = call({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        names = sorted(tool["name"] for tool in listed["result"]["tools"])
        assert "memory_search" in names and "memory_store" in names, names
        process.stdin.close()
        assert process.wait(timeout=TIMEOUT_S) == 0, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return f"tools/list: {len(names)} tools ({', '.join(names)})"


def check_vectors_and_engines(app: Artefact) -> str:
    """sqlite-vec and numpy from the build (embed, search by meaning), and the import and
    export engines it loads by name (export JSONL, import it into a new brain)."""
    brain = app.scratch / "sample.sqlite"
    ollama = FakeOllama().start()
    try:
        base = ["--brain", str(brain), "--ollama-url", ollama.url]
        app.ok(*base, "embed")
        found = json.loads(
            app.ok(*base, "--json", "search", "deploy on friday", "--mode", "semantic")
        )
    finally:
        ollama.stop()
    assert found["search_mode"] == "semantic" and found["results"], found
    exported = app.scratch / "export.json"
    app.ok("--brain", str(brain), "export", "--format", "json", str(exported))
    copy = app.scratch / "copy.sqlite"
    result = json.loads(app.ok("--brain", str(copy), "--json", "import", str(exported)))["result"]
    assert result["imported"] > 0 and not result["errors"], result
    return f"semantic search answered; exported and imported {result['imported']} records"


def check_bundle_contents(app: Artefact) -> str:
    internal = app.folder / "_internal"
    plugins = internal / "PySide6" / "Qt" / "plugins"
    shipped = sorted(p.relative_to(plugins) for p in plugins.rglob("*.so"))
    stray = [str(p) for p in shipped if not keeps_plugin(p.parts[0], p.name)]
    assert not stray, f"Qt plugins the build should leave out: {stray}"
    assert {p.parts[0] for p in shipped} <= set(QT_PLUGINS), shipped
    assert not (internal / "PySide6" / "Qt" / "translations").exists(), "Qt translations shipped"
    libraries = [p.name for p in internal.rglob("*.so*")]
    unused = [n for n in libraries if any(f"Qt6{m}" in n for m in UNUSED_QT)]
    assert not unused, f"Qt libraries memgui does not use: {unused}"
    assert not [n for n in libraries if n.startswith("libreadline")], "GNU readline (GPL) shipped"
    records = json.loads((app.folder / "licences.json").read_text())
    names = {r["name"] for r in records}
    assert {"PySide6_Essentials", "CPython", "PyInstaller bootloader"} <= names, names
    assert (app.folder / "LICENCES.md").read_text().count("|") > len(records), "no table"
    return f"{len(shipped)} Qt plugins, {len(records)} packages in the licence report"


def check_real_display(app: Artefact) -> str:
    """Qt's X11 plugin and the xcb libraries, from the build, on a real (virtual) X server."""
    if not xserver.available():
        raise AssertionError("Xvfb is not installed (make system-packages)")
    with xserver.virtual_display() as display:
        env = dict(app.env, DISPLAY=display.name)
        del env["QT_QPA_PLATFORM"]
        shot = app.scratch / "x11.png"
        app.ok("screenshot", str(app.scratch / "sample.sqlite"), str(shot), env=env)
    assert png_size(shot) == (1280, 800)
    return f"drew the window on X display {display.name}"


CHECKS: list[Callable[[Artefact], str]] = [
    check_version,
    check_screenshot,
    check_mcp,
    check_vectors_and_engines,
    check_bundle_contents,
    check_real_display,
    check_desktop_integration,
]


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else ROOT / "dist" / "memgui")
    if not (folder / "memgui").is_file():
        print(f"no build at {folder}: run make package", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix="memgui-smoke-") as scratch:
        app = Artefact(folder, Path(scratch))
        for check in CHECKS:
            started = time.monotonic()
            try:
                said = check(app)
                print(f"ok    {check.__name__} ({time.monotonic() - started:.1f} s): {said}")
            except Exception as error:  # every check runs; each failure is reported
                failed += 1
                print(f"FAIL  {check.__name__}: {error}")
                traceback.print_exc(file=sys.stderr)
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
