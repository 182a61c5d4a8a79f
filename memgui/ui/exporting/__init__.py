"""Exporting in the app: the export dialog and its list of refused traces."""
