"""The `memgui` program puts the command line and the app's part together; the command line
alone knows nothing of the app."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # real processes


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_the_command_line_alone_loads_nothing_of_the_app_and_says_it_has_none(tmp_path):
    done = run_python(
        "import sys\n"
        "from memgui.cli.main import main\n"
        f"code = main(['--brain', {str(tmp_path / 'b.sqlite')!r}])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('memgui.ui', 'PySide6'))))\n"
        "sys.exit(code)\n"
    )
    assert done.returncode == 1
    assert done.stdout.strip() == "[]"
    assert "this memgui has no app; name a command" in done.stderr
    assert not (tmp_path / "b.sqlite").exists()


def test_the_program_has_the_app_commands_without_loading_qt() -> None:
    done = run_python(
        "import sys\n"
        "import memgui.__main__\n"
        "from memgui.cli.registry import REGISTRY, app_opener\n"
        "print('screenshot' in REGISTRY, app_opener is not None, 'PySide6' in sys.modules)\n"
    )
    assert done.stdout.split() == ["True", "True", "False"], done.stderr
