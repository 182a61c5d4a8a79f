"""memgui: a desktop app and core library for the long-term memory of AI agents."""

__version__ = "0.1.0"
# The desktop's name for memgui: its .desktop file, AppStream id and Wayland app id.
APP_ID = "io.memgui.memgui"
