"""The `memgui` command: `main.py` parses and dispatches, `commands/` holds the subcommands."""
