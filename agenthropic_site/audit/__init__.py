"""Check and compare built sites: snapshots, diffs and verification against the corpus."""

MANIFEST = "MANIFEST.json"  # a snapshot's first member (named here so `--help` need not import the archive code)
