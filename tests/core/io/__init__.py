"""Tests of import and export: plan, commit, formats end to end, round trips."""
