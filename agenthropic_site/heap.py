"""The garbage collector of a command's process: paused while the package imports, resumed for the work."""

from __future__ import annotations

import gc

# Young objects gathered before a collection once the work starts (CPython's default is 700). A
# build's objects are trees (parsed JSON, dataclasses) freed by reference counting; a cold build of
# 500 generated sessions in one process leaves under a thousand objects in cycles, so larger young
# batches cost little memory and walk fewer survivors again. The 60 MB session's views and
# transcripts live through its render: batches of 10,000 walked them in 36 collections (0.10-0.19 s
# of an append, 0.29 s of its cold build), of 100,000 in 2 (0.07 s), of 200,000 in none, at the
# same peak memory (docs/benchmarks.md).
YOUNG_THRESHOLD = 200_000


def pause_for_imports() -> None:
    """Stop collecting garbage: what importing the package makes lives as long as the process."""
    gc.disable()


def resume_after_imports() -> None:
    """Exempt every object made so far from later collections, then collect again in larger young batches.

    Only in a process that paused: a caller whose collector runs (a test, a library user) keeps it as it is.
    """
    if gc.isenabled():
        return
    settle_inherited()
    gc.enable()


def settle_inherited() -> None:
    """Exempt every object made so far from later collections, and collect in larger young batches (a worker, once started)."""
    # Freezing relinks the collector's lists without touching the objects: a forked worker's
    # pages of its server's modules are not copied by the collections that no longer walk them.
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
