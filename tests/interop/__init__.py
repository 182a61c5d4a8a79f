"""Tests against the real AgentOS package (npm): it reads what memgui writes, and the reverse."""
