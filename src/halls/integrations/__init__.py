"""Agent integrations: Claude Code hooks, and agent memory files read for ``halls import``."""
