"""Models of the memgui window."""
