"""`memgui` as a real process: exit codes, stdout and stderr as scripts see them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes

OK, FAILURE, USAGE, NOT_FOUND, CONFLICT = 0, 1, 2, 3, 4


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MEMGUI_BRAIN", None)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    return env


def memgui(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgui", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_exit_codes_of_a_session(env, tmp_path):
    brain = str(tmp_path / "b.sqlite")
    added = memgui(env, "--brain", brain, "add", "first", "--json")
    assert added.returncode == OK, added.stderr
    trace = json.loads(added.stdout)
    assert trace["content"] == "first" and added.stderr == ""

    bad_ttl = memgui(env, "--brain", brain, "add", "x", "--ttl-secs", "0")
    assert bad_ttl.returncode == USAGE and bad_ttl.stdout == ""
    assert bad_ttl.stderr == (
        "memgui: invalid argument: ttl_secs must be between 1 and 3155760000 (got 0)\n"
    )

    missing = memgui(env, "--brain", brain, "get", "mt_missing")
    assert missing.returncode == NOT_FOUND and "mt_missing" in missing.stderr

    stale = memgui(
        env, "--brain", brain, "update", trace["id"], "--content", "y", "--expect-version", "7"
    )
    assert stale.returncode == CONFLICT and trace["id"] in stale.stderr

    usage = memgui(env, "--brain", brain, "list", "--limit")
    assert usage.returncode == USAGE and "usage: memgui list" in usage.stderr

    info = memgui(env, "--brain", brain, "--json", "info")
    assert json.loads(info.stdout)["traces"] == 1  # none of the rejections wrote


def test_a_damaged_brain_exits_1_without_sql(env, tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"\x00garbage" * 512)
    done = memgui(env, "--brain", str(broken), "search", "anything")
    assert done.returncode == FAILURE
    assert "is not a readable brain" in done.stderr
    assert "SELECT" not in done.stderr and "Traceback" not in done.stderr


def test_memgui_brain_variable_in_a_process(env, tmp_path):
    env["MEMGUI_BRAIN"] = str(tmp_path / "from-env.sqlite")
    done = memgui(env, "info", "--json")
    assert done.returncode == OK, done.stderr
    assert json.loads(done.stdout)["brain_id"] == "from-env"


def test_the_installed_console_script(env, tmp_path):
    script = shutil.which("memgui", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the memgui console script is not installed in this environment")
    done = subprocess.run(
        [script, "--brain", str(tmp_path / "b.sqlite"), "--json", "info"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == OK, done.stderr
    assert json.loads(done.stdout)["brain_id"] == "b"
