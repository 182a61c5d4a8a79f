"""The format names of imports and exports, in a module of their own.

The command line lists them in its help; reading them here spares every `memgui` call from
loading the import and export engines.
"""

IMPORT_FORMATS = ("sqlite", "json", "jsonl", "markdown", "obsidian", "chatgpt", "csv", "gsd")
EXPORT_FORMATS = ("sqlite", "json", "jsonl", "markdown", "obsidian")
