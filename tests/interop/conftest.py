"""`agentos`: the pinned install of the real AgentOS package (`npm_env.ensure_agentos`), or the
tests that need it skipped saying why (failed on CI, where a broken install is a broken build)."""

from __future__ import annotations

import os

import pytest

from tests.interop.npm_env import NpmEnv, ensure_agentos


@pytest.fixture(scope="module")
def agentos() -> NpmEnv:
    env = ensure_agentos()
    if env.prefix is None:
        assert env.skip_reason is not None
        # On CI a broken install is a broken build, not a reason to skip quietly.
        if env.install_failed and os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(env.skip_reason)
        pytest.skip(env.skip_reason)
    return env
