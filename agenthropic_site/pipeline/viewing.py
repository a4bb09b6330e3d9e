"""The views stage in worker processes: many batches of session views computed and encoded at once."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

from agenthropic_site.cache import Cache
from agenthropic_site.cost import PriceTable
from agenthropic_site.model.stored import ViewRow, ViewsInWorkers, view_rows
from agenthropic_site.model.views import compute_views
from agenthropic_site.pipeline.parsing import WORKER_PRELOAD
from agenthropic_site.pipeline.pool import Task, map_in_order

log = logging.getLogger(__name__)


def views_in_workers(cache_folder: Path, prices: PriceTable, jobs: int) -> ViewsInWorkers:
    """Return what computes batches of views in `jobs` worker processes, each reading the cache in `cache_folder`, with the build's prices."""

    def in_workers(batches: list[list[str]], do_here: Callable[[list[str]], dict[str, ViewRow]]) -> Iterator[tuple[list[str], dict[str, ViewRow]]]:
        log.info(f"computing the views of {sum(len(batch) for batch in batches)} sessions in {min(jobs, len(batches))} processes")
        with closing(map_in_order(VIEW_TASK, (cache_folder, prices), batches, jobs, do_here, _fell_back)) as answers:
            yield from answers

    return in_workers


def _fell_back(why: str) -> None:
    log.info(f"notice: {why}; this process computed the remaining views")


# The views task of worker processes (pipeline/pool.py): the setup is (cache folder, the build's price table).
def start(setup: tuple[Path, PriceTable]) -> tuple[Cache, PriceTable]:
    """Open the cache read-only (in a worker process)."""
    cache_folder, prices = setup
    return Cache.reader(cache_folder), prices


def run(state: tuple[Cache, PriceTable], batch: list[str]) -> dict[str, ViewRow]:
    """Compute and encode the views of one batch of sessions, whose rows the build checked (in a worker process)."""
    cache, prices = state
    return view_rows(compute_views(cache, batch, prices))


VIEW_TASK: Task[tuple[Cache, PriceTable], list[str], dict[str, ViewRow]] = Task(start, run, WORKER_PRELOAD)
