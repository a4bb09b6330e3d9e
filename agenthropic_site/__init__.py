"""agenthropic: static-site reports of Claude Code sessions."""

__version__ = "0.1.0"
