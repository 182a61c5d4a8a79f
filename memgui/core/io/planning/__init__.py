"""Planning an import: every record read is classified against the brain; nothing is written."""
