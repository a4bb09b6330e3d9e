"""The live side: the hook spool, hook events, Claude Code settings editing and the watch loop."""
