"""Tests of the format readers, one file per reader."""
