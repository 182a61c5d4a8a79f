"""sqlite-vec's loadable extension (`sqlite_vec/vec0.so`) is a file SQLite opens by path, not a
Python module, and its name does not match PyInstaller's `lib*.so` pattern for libraries:
collect it beside the package, where memgui (core/search/vectors.py) looks for it."""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("sqlite_vec", search_patterns=["vec0.*"])
