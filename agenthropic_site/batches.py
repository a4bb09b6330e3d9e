"""Cut work into batches bounded by a count and by a weight, so memory follows the batch whatever the items' sizes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def batched(items: Sequence[T], most: int, weigh: Callable[[T], int] | None = None, budget: int = 0) -> list[list[T]]:
    """Cut `items`, in order, into batches of at most `most` items whose weights (`weigh`) sum to at most `budget`.

    An item heavier than `budget` is a batch of its own; without `weigh` only the count bounds a
    batch. No batch is empty, and the batches joined are `items`.
    """
    most = max(1, most)
    if weigh is None:
        return [list(items[start : start + most]) for start in range(0, len(items), most)]
    batches: list[list[T]] = []
    batch: list[T] = []
    weight = 0
    for item in items:
        heavy = weigh(item)
        if batch and (len(batch) == most or weight + heavy > budget):
            batches.append(batch)
            batch, weight = [], 0
        batch.append(item)
        weight += heavy
    if batch:
        batches.append(batch)
    return batches
