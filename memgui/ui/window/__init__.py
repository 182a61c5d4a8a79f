"""What the main window installs on itself: edits, brain files, live refresh, the shown trace,
import and export actions, and its saved layout."""
