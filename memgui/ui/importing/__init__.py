"""Importing in the app: the import window (plan, review, commit), drops, reports."""
