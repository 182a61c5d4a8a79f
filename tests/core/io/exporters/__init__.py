"""Tests of the exporters, one file per format, and of where an export may write."""
