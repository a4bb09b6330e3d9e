"""`record_class` behaves as `@dataclass` does: the same equality, hash, order and repr, from shared functions.

Each record class here has a twin made by `dataclasses.dataclass` with the same fields and options;
every comparison, hash and repr of the record must be the twin's (with the twin's class name).
The package's classes all use it, so that importing them compiles no method but `__init__` and a
frozen class's attribute guards (agenthropic_site/records.py says why).
"""

from __future__ import annotations

import ast
import dataclasses
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenthropic_site.records import record_class
from conftest import REPO

VALUES = st.recursive(
    st.none() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=True) | st.booleans(),
    lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=3),
    max_leaves=6,
)


@record_class(frozen=True, order=True)
class FrozenRecord:
    """A frozen, ordered record with a field left out of comparisons and one left out of its repr."""

    name: Any
    count: Any = 0
    note: Any = dataclasses.field(default=None, compare=False)
    secret: Any = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True, order=True)
class FrozenTwin:
    """FrozenRecord as `@dataclass` makes it."""

    name: Any
    count: Any = 0
    note: Any = dataclasses.field(default=None, compare=False)
    secret: Any = dataclasses.field(default=None, repr=False)


@record_class
class MutableRecord:
    """A mutable record of one field."""

    items: Any = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class MutableTwin:
    """MutableRecord as `@dataclass` makes it."""

    items: Any = dataclasses.field(default_factory=list)


@record_class(frozen=True, slots=True)
class SlottedRecord:
    """A frozen record with slots, as parse/model.py's Tokens."""

    left: int
    right: int


@dataclasses.dataclass(frozen=True, slots=True)
class SlottedTwin:
    """SlottedRecord as `@dataclass` makes it."""

    left: int
    right: int


@record_class(frozen=True)
class Empty:
    """A record without fields."""


@dataclasses.dataclass(frozen=True)
class EmptyTwin:
    """Empty as `@dataclass` makes it."""


@record_class
class Shown:
    """A record that writes its own repr: kept, as `@dataclass` keeps it."""

    value: int

    def __repr__(self) -> str:
        return f"<{self.value}>"


def as_twin(text: str, record: type, twin: type) -> str:
    """Return a repr of a record written with its twin's class name."""
    return text.replace(record.__qualname__, twin.__qualname__)


@given(VALUES, VALUES, VALUES, VALUES, VALUES, VALUES)
def test_a_frozen_record_compares_hashes_orders_and_shows_as_its_dataclass_twin(a: Any, b: Any, c: Any, d: Any, e: Any, f: Any) -> None:
    left, right = FrozenRecord(a, b, c, d), FrozenRecord(a if e is None else e, b, f, d)
    left_twin, right_twin = FrozenTwin(a, b, c, d), FrozenTwin(a if e is None else e, b, f, d)
    assert (left == right) == (left_twin == right_twin)
    assert (left != right) == (left_twin != right_twin)
    assert as_twin(repr(left), FrozenRecord, FrozenTwin) == repr(left_twin)
    assert "secret" not in repr(left)
    for compare in ("__lt__", "__le__", "__gt__", "__ge__"):
        try:
            expected: Any = getattr(left_twin, compare)(right_twin)
        except TypeError:
            expected = TypeError
        try:
            found: Any = getattr(left, compare)(right)
        except TypeError:
            found = TypeError
        assert found == expected, compare
    try:
        expected_hash: Any = hash(left_twin)
    except TypeError:
        expected_hash = TypeError
    try:
        found_hash: Any = hash(left)
    except TypeError:
        found_hash = TypeError
    assert found_hash == expected_hash


def test_fields_left_out_of_comparisons_are_left_out_of_equality_and_hash() -> None:
    assert FrozenRecord("a", 1, note="x") == FrozenRecord("a", 1, note="y")
    assert hash(FrozenRecord("a", 1, note="x")) == hash(FrozenRecord("a", 1, note="y"))
    assert FrozenRecord("a", 1) != FrozenRecord("a", 2)
    assert FrozenRecord("a", 1, secret="s") != FrozenRecord("a", 1, secret="t")  # repr=False is still compared


def test_records_of_other_classes_are_never_equal_and_never_ordered() -> None:
    assert FrozenRecord("a") != FrozenTwin("a")
    assert FrozenTwin("a") != FrozenRecord("a")
    assert FrozenRecord("a") != ("a", 0)
    with pytest.raises(TypeError):
        _ = FrozenRecord("a") < FrozenTwin("b")  # type: ignore[operator]


def test_a_mutable_record_is_unhashable_and_compares_its_field() -> None:
    record, twin = MutableRecord([1]), MutableTwin([1])
    with pytest.raises(TypeError, match="unhashable"):
        hash(record)
    assert MutableRecord.__hash__ is None and MutableTwin.__hash__ is None
    assert record == MutableRecord([1]) and record != MutableRecord([2])
    assert as_twin(repr(record), MutableRecord, MutableTwin) == repr(twin)
    record.items.append(record)  # a record inside itself
    twin.items.append(twin)
    assert as_twin(repr(record), MutableRecord, MutableTwin) == repr(twin) == "MutableTwin(items=[1, ...])"


def test_a_frozen_record_with_slots_refuses_changes_pickles_and_is_replaced_as_a_dataclass() -> None:
    record = SlottedRecord(1, 2)
    assert not hasattr(record, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.left = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(record)) == record
    assert dataclasses.replace(record, right=5) == SlottedRecord(1, 5)
    assert hash(record) == hash(SlottedTwin(1, 2)) == hash((1, 2))
    assert as_twin(repr(record), SlottedRecord, SlottedTwin) == repr(SlottedTwin(1, 2))
    assert [field.name for field in dataclasses.fields(record)] == ["left", "right"]


def test_a_record_without_fields_equals_its_kind_only() -> None:
    assert Empty() == Empty() and hash(Empty()) == hash(EmptyTwin()) == hash(())
    assert Empty() != EmptyTwin()
    assert repr(Empty()) == "Empty()" and repr(EmptyTwin()) == "EmptyTwin()"


def test_a_method_the_class_writes_is_kept() -> None:
    assert repr(Shown(3)) == "<3>"
    assert Shown(3) == Shown(3)


def test_every_dataclass_of_the_package_is_a_record_class() -> None:
    plain = []
    for path in sorted((REPO / "agenthropic_site").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if ast.unparse(target) in ("dataclass", "dataclasses.dataclass"):
                        plain.append(f"{Path(path).relative_to(REPO)}: {node.name}")
    assert plain == [], "each compiles its own __eq__, __hash__ and __repr__ on import: use record_class"
