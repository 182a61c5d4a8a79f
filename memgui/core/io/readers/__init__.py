"""Readers: one per source format, each turns a file or folder into records, never a brain."""
