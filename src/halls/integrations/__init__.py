"""Agent integrations: Claude Code hooks (install, uninstall, and what they run)."""
