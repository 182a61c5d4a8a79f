"""The licence report of a build: every package the build bundles, its version and licence,
and the licence texts beside it (`LICENCES.md`, `licences.json` and `licences/` in the build).

Each bundled file is traced to where PyInstaller took it from (the spec's manifest): a
Python distribution of the build's venv (its metadata names the licence), CPython itself,
or a Debian package of the build machine (`dpkg -S`; its licence from the table below,
each entry read from `/usr/share/doc/<package>/copyright`). A file no rule places, a
Debian package not in the table, or a licence that is GPL-only (a GPL with no alternative
and no exception that allows linking) fails the build.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

# Debian 12's packages the build takes shared libraries from, by `Files: *` (or the stanza
# of the library's own files) of each copyright file. Review a new one before adding it.
DEBIAN_LICENCES = {
    "libbrotli1": "MIT",
    "libbsd0": "BSD-3-Clause AND BSD-2-Clause AND ISC AND Beerware",
    "libbz2-1.0": "bzip2-1.0.6",
    "libcap2": "BSD-3-Clause OR GPL-2.0-only",
    "libdbus-1-3": "AFL-2.1 OR GPL-2.0-or-later",
    "libexpat1": "MIT",
    "libffi8": "MIT",
    "libfontconfig1": "HPND-sell-variant",
    "libfreetype6": "FTL OR GPL-2.0-or-later",
    "libgcc-s1": "GPL-3.0-or-later WITH GCC-exception-3.1",
    "libgcrypt20": "LGPL-2.1-or-later",
    "libglib2.0-0": "LGPL-2.1-or-later",
    "libgpg-error0": "LGPL-2.1-or-later",
    "liblz4-1": "BSD-2-Clause",
    "liblzma5": "LicenseRef-public-domain",
    "libmd0": "BSD-3-Clause AND BSD-2-Clause AND ISC AND Beerware AND LicenseRef-public-domain",
    "libpcre2-8-0": "BSD-3-Clause WITH PCRE2-exception",
    "libpng16-16": "libpng-2.0",
    "libsqlite3-0": "blessing",
    "libssl3": "Apache-2.0",
    "libstdc++6": "GPL-3.0-or-later WITH GCC-exception-3.1",
    "libsystemd0": "LGPL-2.1-or-later",
    "libuuid1": "BSD-3-Clause",  # util-linux's Files: libuuid/*
    "libx11-6": "MIT",
    "libx11-xcb1": "MIT",
    "libxau6": "MIT",
    "libxdmcp6": "MIT",
    "libxkbcommon0": "MIT",
    "libxkbcommon-x11-0": "MIT",
    "libzstd1": "BSD-3-Clause OR GPL-2.0-only",
    "zlib1g": "Zlib",
}
DEBIAN_PATTERNS = {r"libxcb(-[a-z-]+)?\d+": "MIT"}  # the XCB libraries, all X11-style MIT

# Where a wheel's metadata names no usable licence (read from the package's own files).
PYTHON_LICENCES = {
    "apsw": "Zlib OR LicenseRef-any-OSI",  # "any-OSI": any OSI licence, or the zlib text
    "sqlite-vec": "MIT OR Apache-2.0",
    # PyInstaller's loader modules and runtime hooks in the build (its COPYING.txt: the
    # exception covers what it puts into a frozen program); the contributed runtime hooks
    # are Apache-2.0 (its README: hooks GPL-2.0-or-later, runtime hooks Apache-2.0).
    "pyinstaller": "GPL-2.0-or-later WITH Bootloader-exception",
    "pyinstaller-hooks-contrib": "Apache-2.0",
}
# Libraries a wheel carries inside it under their own licences (file name prefix).
VENDORED = {
    "libicu": ("ICU (in PySide6's Qt)", "Unicode-DFS-2016"),
    "libscipy_openblas": ("OpenBLAS (in numpy)", "BSD-3-Clause"),
    "libgfortran": ("libgfortran (in numpy)", "GPL-3.0-or-later WITH GCC-exception-3.1"),
    "libquadmath": ("libquadmath (in numpy)", "LGPL-2.1-or-later"),
}
# Exceptions that allow shipping a GPL component with a program of another licence.
LINKING_EXCEPTIONS = {"GCC-exception-3.1", "Bootloader-exception", "Classpath-exception-2.0"}
COMMON_LICENCES = Path("/usr/share/common-licenses")
MEMGUI_LICENCE = Path(__file__).resolve().parents[1] / "LICENSE"
ICU_NOTICE = Path("/usr/share/doc/libicu72/copyright")  # Debian's copy of ICU's licence
LICENCE_FILE = re.compile(r"(LICEN[CS]E|COPYING|NOTICE|AUTHORS)", re.IGNORECASE)


@dataclass
class Component:
    name: str
    version: str
    licence: str
    origin: str  # "Python package", "Debian package", "CPython", "bundled in a wheel", …
    files: list[str] = field(default_factory=list)  # paths inside the build
    texts: list[Path] = field(default_factory=list)  # licence texts to ship


# --- licence expressions ------------------------------------------------------------------


def _tokens(expression: str) -> list[str]:
    return re.findall(r"\(|\)|[^\s()]+", expression)


def allows_non_gpl_use(expression: str) -> bool:
    """False for a GPL-only licence: every way to take it is a GPL (not LGPL) without an
    exception that allows linking. `A OR B` needs one such way, `A AND B` both."""
    tokens = _tokens(expression)
    position = 0

    def parse_or() -> bool:
        nonlocal position
        ok = parse_and()
        while position < len(tokens) and tokens[position].upper() == "OR":
            position += 1
            ok = parse_and() or ok
        return ok

    def parse_and() -> bool:
        nonlocal position
        ok = parse_with()
        while position < len(tokens) and tokens[position].upper() == "AND":
            position += 1
            ok = parse_with() and ok
        return ok

    def parse_with() -> bool:
        nonlocal position
        if tokens[position] == "(":
            position += 1
            ok = parse_or()
            position += 1  # ")"
        else:
            ok = not re.match(r"^A?GPL-", tokens[position], re.IGNORECASE)
            position += 1
        if position < len(tokens) and tokens[position].upper() == "WITH":
            exception = tokens[position + 1]
            position += 2
            ok = ok or exception in LINKING_EXCEPTIONS
        return ok

    return parse_or()


# --- tracing each file to its package -----------------------------------------------------


def _python_index() -> dict[Path, tuple[str, metadata.Distribution]]:
    """Every file of the venv's distributions -> (the distribution's name, it)."""
    index: dict[Path, tuple[str, metadata.Distribution]] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        for file in dist.files or []:
            index[Path(dist.locate_file(file)).resolve()] = (name, dist)
    return index


def _python_licence(dist: metadata.Distribution) -> str:
    name = dist.metadata["Name"]
    if name.lower() in PYTHON_LICENCES:
        return PYTHON_LICENCES[name.lower()]
    expression = dist.metadata.get("License-Expression") or dist.metadata.get("License") or ""
    if expression and len(expression) < 100 and "\n" not in expression:
        return expression.strip()
    raise SystemExit(f"licence report: {name} names no licence the report can use")


def _debian_packages(sources: list[Path]) -> dict[Path, tuple[str, str]]:
    """The Debian package (name, version) each file belongs to, in two calls to dpkg for
    them all; a file is looked up by its resolved path and by the path it was found at
    (Debian's /lib is /usr/lib)."""
    asked = {str(p): source for source in sources for p in (source.resolve(), source)}
    found = subprocess.run(["dpkg", "-S", *asked], capture_output=True, text=True)
    owner: dict[Path, str] = {}
    for line in found.stdout.splitlines():
        packages, _, path = line.partition(": ")
        if path in asked:
            owner.setdefault(asked[path], packages.split(",")[0].split(":")[0].strip())
    names = sorted(set(owner.values()))
    listed = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Version}\n", *names], capture_output=True, text=True
    ).stdout
    versions = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
    return {source: (name, versions.get(name, "?")) for source, name in owner.items()}


def _debian_licence(package: str) -> str:
    if package in DEBIAN_LICENCES:
        return DEBIAN_LICENCES[package]
    for pattern, licence in DEBIAN_PATTERNS.items():
        if re.fullmatch(pattern, package):
            return licence
    raise SystemExit(
        f"licence report: the build bundles a library of the Debian package {package}, "
        "whose licence is not reviewed: read /usr/share/doc/{package}/copyright and add it "
        "to DEBIAN_LICENCES in packaging/licences.py"
    )


def _licence_texts(dist: metadata.Distribution) -> list[Path]:
    files = [Path(dist.locate_file(f)) for f in dist.files or []]
    return [f for f in files if LICENCE_FILE.search(f.name) and f.suffix != ".py"]


class _Tracer:
    """Which component a file the build took from `source` belongs to."""

    def __init__(self, sources: list[Path]) -> None:
        self.index = _python_index()
        self.python_home = Path(sys.base_prefix).resolve()
        self.made: dict[tuple[str, str], Component] = {}  # one per package, made once
        self.debian = _debian_packages([s for s in sources if self._key(s.resolve()) is None])

    def _key(self, path: Path) -> tuple[str, str] | None:
        """What a file is part of, without the system's package database."""
        vendored = next((k for k in VENDORED if path.name.startswith(k)), None)
        if vendored is not None:
            return ("vendored", vendored)
        if path in self.index:
            return ("python", self.index[path][0])
        stdlib_zip = path.name == "base_library.zip"  # PyInstaller packs it from the stdlib
        if self.python_home in path.parents or path.name.startswith("libpython") or stdlib_zip:
            return ("cpython", "")
        return None

    def component(self, source: Path) -> Component:
        path = source.resolve()
        key = self._key(path)
        if key is None:
            if source not in self.debian:
                raise SystemExit(f"licence report: cannot tell which package {source} is from")
            key = ("debian", self.debian[source][0])
        if key not in self.made:
            self.made[key] = self._make(key, path, source)
        return self.made[key]

    def _make(self, key: tuple[str, str], path: Path, source: Path) -> Component:
        kind, name = key
        dist = self.index[path][1] if path in self.index else None
        if kind == "vendored":  # the wheel's own licence files list what it bundles
            title, licence = VENDORED[name]
            texts = _licence_texts(dist) if dist else []
            if title.startswith("ICU") and ICU_NOTICE.is_file():
                texts.append(ICU_NOTICE)
            version = dist.version if dist else "?"
            return Component(title, version, licence, "bundled in a wheel", texts=texts)
        if kind == "python" and dist is not None:
            texts = [MEMGUI_LICENCE] if name == "memgui" else _licence_texts(dist)
            return Component(name, dist.version, _python_licence(dist), "Python package", texts)
        if kind == "cpython":
            version = platform.python_version()
            return Component("CPython", version, "PSF-2.0", "CPython", texts=[_cpython_licence()])
        package, version = self.debian[source]
        copyright_file = Path("/usr/share/doc") / package / "copyright"
        licence = _debian_licence(package)
        return Component(package, version, licence, "Debian package", texts=[copyright_file])


def components(manifest: dict, bootloader_version: str) -> list[Component]:
    """Every component of the build, from the spec's manifest (run in the build's venv)."""
    files = [
        (dest, Path(source))
        for part in ("binaries", "datas", "modules")
        for dest, source, kind in manifest[part]
        if kind != "SYMLINK" and source not in (None, "", "-")  # a link; a namespace package
    ]
    tracer = _Tracer([source for _dest, source in files])
    for dest, source in files:
        tracer.component(source).files.append(dest)
    bootloader = Component(
        "PyInstaller bootloader",
        bootloader_version,
        "GPL-2.0-or-later WITH Bootloader-exception",
        "the memgui executable",
        files=["memgui"],
        texts=_pyinstaller_licence(),
    )
    found = [*tracer.made.values(), bootloader]
    return sorted(found, key=lambda c: (c.origin, c.name.lower()))


def _cpython_licence() -> Path:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return Path(sys.base_prefix) / "lib" / f"python{version}" / "LICENSE.txt"


def _pyinstaller_licence() -> list[Path]:
    dist = metadata.distribution("pyinstaller")
    return [Path(dist.locate_file(f)) for f in dist.files or [] if "COPYING" in str(f)]


# --- the report ---------------------------------------------------------------------------

COMMON_TEXTS = {  # SPDX id -> Debian's copy of the licence's text, for packages without one
    "Apache-2.0": "Apache-2.0",
    "GPL-2.0-only": "GPL-2",
    "GPL-3.0-only": "GPL-3",
    "LGPL-2.1-or-later": "LGPL-2.1",
    "LGPL-3.0-only": "LGPL-3",
    "MPL-2.0": "MPL-2.0",
}
QT_NOTE = """\
**Qt and PySide6 are used under the LGPL-3.0** (they are offered under LGPL-3.0, GPL-2.0 or
GPL-3.0). They are shipped unmodified, as the shared libraries of the PySide6-Essentials and
shiboken6 wheels (`_internal/PySide6/`, `_internal/shiboken6/`), which the program loads at
run time: anyone may replace them with their own build of the same version and memgui uses
it. Their source is at https://download.qt.io/official_releases/QtForPython/ and
https://code.qt.io/.
"""


def lgpl_note(found: list[Component]) -> str:
    """The same said of the other LGPL libraries the build holds."""
    others = [c for c in found if "LGPL" in c.licence and c.origin != "Python package"]
    if not others:
        return ""
    names = ", ".join(f"{c.name} {c.version}" for c in others)
    return (
        f"The same holds for the other LGPL libraries below ({names}): each is a separate "
        "shared library in `_internal/`, and its source is the Debian package of the version "
        "named (or, for one bundled in a wheel, that wheel's project).\n"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _texts(component: Component) -> list[Path]:
    texts = [t for t in component.texts if t.is_file()]
    if not texts:
        for spdx in _tokens(component.licence):
            common = COMMON_LICENCES / COMMON_TEXTS.get(spdx, "-")
            if common.is_file():
                texts.append(common)
    return texts


def write_report(found: list[Component], build_dir: Path) -> Path:
    """`LICENCES.md`, `licences.json` and `licences/` (the texts) in `build_dir`; fails
    when a component is GPL-only."""
    gpl_only = [c for c in found if not allows_non_gpl_use(c.licence)]
    if gpl_only:
        names = ", ".join(f"{c.name} ({c.licence})" for c in gpl_only)
        raise SystemExit(f"licence report: the build bundles GPL-only components: {names}")
    texts_dir = build_dir / "licences"
    shutil.rmtree(texts_dir, ignore_errors=True)
    rows, records = [], []
    for component in found:
        folder = texts_dir / _slug(component.origin) / _slug(component.name)
        shipped = []
        for text in _texts(component):
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / text.name
            if target.exists():  # two texts of one name (numpy's own and its bundled list)
                target = folder / f"{text.parent.name}-{text.name}"
            shutil.copyfile(text, target)
            shipped.append(str(target.relative_to(build_dir)))
        records.append(
            {
                "name": component.name,
                "version": component.version,
                "licence": component.licence,
                "origin": component.origin,
                "files": len(component.files),
                "texts": shipped,
            }
        )
        where = ", ".join(f"`{s}`" for s in shipped) or "—"
        rows.append(
            f"| {component.name} | {component.version} | {component.licence} | "
            f"{component.origin} | {len(component.files)} | {where} |"
        )
    (build_dir / "licences.json").write_text(json.dumps(records, indent=1) + "\n")
    report = build_dir / "LICENCES.md"
    report.write_text(
        "# What this build of memgui bundles, and under which licences\n\n"
        "memgui itself is MIT-licensed. This folder also holds the packages below, as the "
        "build found them (generated by `packaging/licences.py` at build time). None is "
        "GPL-only: each GPL component is offered under another licence too, or carries an "
        "exception that allows shipping it with a program of any licence.\n\n"
        + QT_NOTE
        + "\n"
        + lgpl_note(found)
        + "\n| Package | Version | Licence (SPDX) | From | Files | Licence text |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    return report
