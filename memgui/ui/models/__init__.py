"""Models of the memgui window."""

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

# What Qt hands a model's overrides (rowCount, data, flags…): either kind of index.
Index = QModelIndex | QPersistentModelIndex
