# Overrides PyInstaller's hook of PySide6.QtCore: the same collection, trimmed (bundle.py).
from bundle import trimmed_qt_dependencies

hiddenimports, binaries, datas = trimmed_qt_dependencies(__file__)
