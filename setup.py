"""The one compiled part: memgui_bm25, an SQLite extension (memgui/core/search/bm25.py),
with memgui_busy_wait, its busy handler (memgui/core/storage/busy_wait.py).

Optional: without a C compiler the install goes on and memgui ranks with FTS5's own bm25,
the same scores, slower at a million traces (`make` installs a compiler first).
"""

import os

from setuptools import Extension, setup

CSRC = "memgui/core/search/csrc"

setup(
    ext_modules=[
        Extension(
            # Not a Python module (it has no PyInit): SQLite loads it (bm25.extension_path).
            "memgui.core.search._memgui_bm25",
            sources=[f"{CSRC}/memgui_bm25.c", f"{CSRC}/count_cache.c", f"{CSRC}/busy_wait.c"],
            depends=[f"{CSRC}/sqlite3.h", f"{CSRC}/sqlite3ext.h", f"{CSRC}/count_cache.h"],
            include_dirs=[CSRC],
            # No fused multiply-add: the scores must be FTS5's bm25 to the last bit.
            extra_compile_args=[] if os.name == "nt" else ["-O2", "-ffp-contract=off"],
            libraries=[] if os.name == "nt" else ["m"],
            optional=True,
        )
    ]
)
