"""Batches bounded by a count and a weight (agenthropic_site/batches.py): what parse chunks, views and page batches are cut by."""

from __future__ import annotations

from hypothesis import given, strategies as st

from agenthropic_site.batches import batched


def test_a_heavy_item_goes_alone_and_light_ones_fill_a_batch_up_to_the_count() -> None:
    weights = {"a": 1, "b": 1, "c": 10, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 6, "j": 5}
    assert batched(list(weights), 4, weights.__getitem__, 10) == [["a", "b"], ["c"], ["d", "e", "f", "g"], ["h", "i"], ["j"]]


def test_without_a_weight_only_the_count_bounds_a_batch() -> None:
    assert batched(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batched([], 3) == [] and batched([], 3, len, 5) == []
    assert batched(list(range(3)), 0) == [[0], [1], [2]]  # a count below one is one


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=60), st.integers(min_value=1, max_value=8), st.integers(min_value=0, max_value=80))
def test_batches_keep_every_item_in_order_within_both_bounds_and_are_cut_only_when_full(weights: list[int], most: int, budget: int) -> None:
    items = list(enumerate(weights))  # distinct items, whatever their weights

    def weigh(item: tuple[int, int]) -> int:
        return item[1]

    batches = batched(items, most, weigh, budget)
    assert [item for batch in batches for item in batch] == items
    for batch in batches:
        assert 1 <= len(batch) <= most
        assert len(batch) == 1 or sum(map(weigh, batch)) <= budget
    for batch, following in zip(batches, batches[1:]):
        # The next item did not fit: the batch was full, or it would have gone past the budget.
        assert len(batch) == most or sum(map(weigh, batch)) + weigh(following[0]) > budget
