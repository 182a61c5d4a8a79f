"""Views of the memgui window."""
