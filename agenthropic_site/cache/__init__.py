"""SQLite cache of parsed, priced sessions; checkpoints make rebuilds incremental."""

from agenthropic_site.cache.schema import SCHEMA_VERSION
from agenthropic_site.cache.store import Cache, CacheBusyError, Priced, PricedRow, delete_cache_files

__all__ = ["Cache", "CacheBusyError", "Priced", "PricedRow", "SCHEMA_VERSION", "delete_cache_files"]
