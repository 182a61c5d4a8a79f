"""Tests of the `memgui` command, in-process and as a real process."""
