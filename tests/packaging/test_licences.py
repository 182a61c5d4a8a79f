"""The licence report's rule: nothing GPL-only ships. A licence passes when some way to take
it is not a GPL, or its GPL carries an exception that allows linking."""

from __future__ import annotations

import pytest

from tests.support.packaging import packaging_module


@pytest.mark.parametrize(
    ("expression", "allowed"),
    [
        ("MIT", True),
        ("LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", True),
        ("LGPL-2.1-or-later", True),
        ("BSD-3-Clause OR GPL-2.0-only", True),
        ("GPL-3.0-or-later WITH GCC-exception-3.1", True),
        ("GPL-2.0-or-later WITH Bootloader-exception", True),
        ("MPL-2.0 AND (Apache-2.0 OR MIT)", True),
        ("GPL-2.0-only", False),
        ("GPL-3.0-or-later", False),
        ("AGPL-3.0-only", False),
        ("MIT AND GPL-2.0-only", False),
        ("GPL-2.0-only OR GPL-3.0-only", False),
        ("GPL-3.0-only WITH Some-other-exception", False),
        ("(GPL-2.0-only OR GPL-3.0-only) AND MIT", False),
        ("(GPL-2.0-only OR BSD-2-Clause) AND MIT", True),
    ],
)
def test_gpl_only_is_told_apart(expression: str, allowed: bool) -> None:
    assert packaging_module("licences").allows_non_gpl_use(expression) is allowed


def test_every_reviewed_licence_passes() -> None:
    licences = packaging_module("licences")
    reviewed = [
        *licences.DEBIAN_LICENCES.values(),
        *licences.DEBIAN_PATTERNS.values(),
        *licences.PYTHON_LICENCES.values(),
        *(licence for _name, licence in licences.VENDORED.values()),
    ]
    assert [e for e in reviewed if not licences.allows_non_gpl_use(e)] == []


def test_a_gpl_only_component_fails_the_report(tmp_path) -> None:
    licences = packaging_module("licences")
    found = [
        licences.Component("fine", "1", "MIT", "Python package"),
        licences.Component("readline", "8", "GPL-3.0-or-later", "Debian package"),
    ]
    with pytest.raises(SystemExit, match=r"GPL-only components: readline \(GPL-3.0-or-later\)"):
        licences.write_report(found, tmp_path)
    assert list(tmp_path.iterdir()) == []
