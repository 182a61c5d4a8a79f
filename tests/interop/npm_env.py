"""A pinned AgentOS install for the interop tests, made once with npm into `.npm-cache/`.

`ensure_agentos()` returns either the install folder or the reason it cannot provide one.
The install is a one-time cost (npm compiles `better-sqlite3` when no prebuilt binary fits);
afterwards a stamp file makes the check instant. A lock file serialises parallel runs so two
test sessions never run npm into the same folder at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENTOS_VERSION = "0.9.164"
# better-sqlite3 13 crashes on Node 20; 12 is what produced the shared fixtures.
BETTER_SQLITE3_VERSION = "12"
PACKAGES = (f"@framers/agentos@{AGENTOS_VERSION}", f"better-sqlite3@{BETTER_SQLITE3_VERSION}")

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = PROJECT_ROOT / ".npm-cache" / f"agentos-{AGENTOS_VERSION}"
PROBE_SCRIPT = Path(__file__).resolve().parent / "agentos_probe.mjs"

INSTALL_TIMEOUT_SECS = 900
STDERR_TAIL_LINES = 15

# Loads both packages the way the probe does; fails if the native better-sqlite3 build is
# missing or was built for another Node ABI.
_VERIFY_SCRIPT = """
const Database = require('better-sqlite3');
new Database(':memory:').prepare('select 1').get();
const pkg = require('@framers/agentos/package.json');
process.stdout.write(pkg.version);
"""


@dataclass(frozen=True)
class NpmEnv:
    """The install folder, or why there is none (`install_failed` tells tools from npm)."""

    prefix: Path | None
    skip_reason: str | None = None
    install_failed: bool = False

    def probe_env(self) -> dict[str, str]:
        """Environment for running `agentos_probe.mjs` against this install."""
        assert self.prefix is not None
        return {**os.environ, "AGENTOS_NODE_MODULES": str(self.prefix)}


def ensure_agentos(cache_dir: Path = CACHE_DIR) -> NpmEnv:
    """Install the pinned AgentOS + better-sqlite3 into `cache_dir` once; reuse it afterwards."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None:
        return NpmEnv(None, "node is not installed (needed to run the real AgentOS package)")
    if npm is None:
        return NpmEnv(None, "npm is not installed (needed to install the real AgentOS package)")
    node_version = _run([node, "--version"], cwd=None).stdout.strip()
    cache_dir.mkdir(parents=True, exist_ok=True)
    stamp = cache_dir / ".installed.json"
    wanted = {"packages": list(PACKAGES), "node": node_version}
    if _read_stamp(stamp) == wanted:
        return NpmEnv(cache_dir)
    with _exclusive_lock(cache_dir.with_name(cache_dir.name + ".lock")):
        if _read_stamp(stamp) == wanted:  # another run finished the install while we waited
            return NpmEnv(cache_dir)
        failure = _install(npm, node, cache_dir)
        if failure is not None:
            return NpmEnv(None, failure, install_failed=True)
        stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return NpmEnv(cache_dir)


def _install(npm: str, node: str, cache_dir: Path) -> str | None:
    """Run npm; return None on success or a reason naming the step and npm's stderr tail."""
    install = [npm, "install", "--prefix", str(cache_dir), "--save-exact"]
    install += ["--no-audit", "--no-fund", *PACKAGES]
    result = _run(install, cwd=cache_dir)
    if result.returncode != 0:
        return _failure("npm install", result, cache_dir)
    verify = _run([node, "-e", _VERIFY_SCRIPT], cwd=cache_dir)
    if verify.returncode != 0:
        # A Node upgrade leaves a native module built for the old ABI: rebuild it once.
        rebuild = _run([npm, "rebuild", "--prefix", str(cache_dir), "better-sqlite3"], cache_dir)
        if rebuild.returncode != 0:
            return _failure("npm rebuild better-sqlite3", rebuild, cache_dir)
        verify = _run([node, "-e", _VERIFY_SCRIPT], cwd=cache_dir)
    if verify.returncode != 0:
        return _failure("loading the installed packages with node", verify, cache_dir)
    if verify.stdout.strip() != AGENTOS_VERSION:
        return f"npm installed @framers/agentos {verify.stdout.strip()!r}, not {AGENTOS_VERSION}"
    return None


def _run(cmd: list[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            cmd,
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=INSTALL_TIMEOUT_SECS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        message = f"timed out after {exc.timeout}s\n{stderr}"
        return subprocess.CompletedProcess(cmd, 124, "", message)


def _failure(step: str, result: subprocess.CompletedProcess[str], cache_dir: Path) -> str:
    tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-STDERR_TAIL_LINES:])
    return f"{step} failed (exit {result.returncode}) in {cache_dir}:\n{tail}"


def _read_stamp(stamp: Path) -> object:
    try:
        return json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@contextmanager
def _exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Block until this process holds an OS-level lock on `lock_path` (freed if it dies)."""
    with open(lock_path, "a+b") as handle:
        if os.name == "nt":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after ~10s; keep waiting for npm
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def run_script(env: NpmEnv, script: Path, *args: str) -> Any:
    """Run one of the AgentOS scripts with `args` against this install; its JSON answer."""
    node = shutil.which("node")
    assert node is not None
    result = subprocess.run(
        [node, str(script), *args],
        env=env.probe_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout)
