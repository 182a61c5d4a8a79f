"""Dialogs of the memgui window."""
