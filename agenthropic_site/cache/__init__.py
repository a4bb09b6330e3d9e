"""SQLite cache of parsed, priced sessions; checkpoints make rebuilds incremental."""

from agenthropic_site.cache.schema import SCHEMA_VERSION
from agenthropic_site.cache.store import Cache, CacheBusyError, SessionCost

__all__ = ["Cache", "CacheBusyError", "SCHEMA_VERSION", "SessionCost"]
