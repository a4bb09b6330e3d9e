"""The site model: per-session views computed from the cache and gathered into one model."""
