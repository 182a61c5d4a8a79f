"""Tests of storage: opening, migrating, checkpoints, lost files, concurrent writers."""
