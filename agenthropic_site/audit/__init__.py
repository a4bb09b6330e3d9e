"""Check and compare built sites: snapshots, diffs and verification against the corpus."""
