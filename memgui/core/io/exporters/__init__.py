"""Exporters: the brain written out as SQLite, JSON, JSONL, Markdown or an Obsidian vault."""
