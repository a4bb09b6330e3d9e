"""`record_class` behaves as `@dataclass` does: the same equality, hash, order and repr, from shared functions.

Each record class here has a twin made by `dataclasses.dataclass` with the same fields and options;
every construction, signature, error, comparison, hash and repr of the record must be the twin's
(with the twin's class name). The package's classes all use it, so that importing them compiles no
method: each `__init__` is the template of its shape, compiled with the package in
agenthropic_site/records/inits.py (agenthropic_site/records/__init__.py says why).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenthropic_site import records
from agenthropic_site.records import inits
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


def check_span(self: Any) -> None:
    """Refuse a low above the high, and note the span between (a __post_init__ that reads the fields and sets more)."""
    if self.low > self.high:
        raise ValueError(f"{self.low} > {self.high}")
    object.__setattr__(self, "span", self.high - self.low)


@record_class(frozen=True)
class Checked:
    """A frozen record whose __post_init__ looks at its fields, with a factory among its defaults."""

    low: int
    high: int = 10
    tags: list[int] = dataclasses.field(default_factory=list)

    __post_init__ = check_span


@dataclasses.dataclass(frozen=True)
class CheckedTwin:
    """Checked as `@dataclass` makes it."""

    low: int
    high: int = 10
    tags: list[int] = dataclasses.field(default_factory=list)

    __post_init__ = check_span


@record_class
class Counters:
    """A mutable record with factories between plain defaults, as the package's accumulators."""

    name: str
    seen: dict[str, int] = dataclasses.field(default_factory=dict)
    total: int = 0
    order: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class CountersTwin:
    """Counters as `@dataclass` makes it."""

    name: str
    seen: dict[str, int] = dataclasses.field(default_factory=dict)
    total: int = 0
    order: list[str] = dataclasses.field(default_factory=list)


@record_class(frozen=True)
class KeywordOnly:
    """A record with a keyword-only field: left to dataclasses whole."""

    first: int
    second: int = dataclasses.field(default=2, kw_only=True)


TWINS = [(FrozenRecord, FrozenTwin), (MutableRecord, MutableTwin), (SlottedRecord, SlottedTwin), (Empty, EmptyTwin),
         (Checked, CheckedTwin), (Counters, CountersTwin)]
ARGUMENT_NAMES = ("name", "count", "note", "secret", "items", "left", "right", "low", "high", "tags", "seen", "total", "order", "other")


def made(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Return a record made with these arguments, or the type and message of the error making it raised."""
    try:
        return cls(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)


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


@pytest.mark.parametrize(("record", "twin"), TWINS, ids=lambda cls: cls.__name__)
def test_a_record_is_made_with_the_signature_of_its_twin(record: type, twin: type) -> None:
    assert inspect.signature(record) == inspect.signature(twin)
    assert str(inspect.signature(record)) == str(inspect.signature(twin))
    assert record.__init__.__qualname__ == f"{record.__qualname__}.__init__"
    assert [field.name for field in dataclasses.fields(record)] == [field.name for field in dataclasses.fields(twin)]


@pytest.mark.parametrize(("record", "twin"), TWINS, ids=lambda cls: cls.__name__)
@given(
    args=st.lists(VALUES, max_size=5),
    names=st.lists(st.sampled_from(ARGUMENT_NAMES), max_size=4, unique=True),
    values=st.lists(VALUES, min_size=4, max_size=4),
)
def test_any_arguments_make_what_they_make_of_the_twin_or_the_same_error(
    record: type, twin: type, args: list[Any], names: list[str], values: list[Any],
) -> None:
    kwargs = dict(zip(names, values))
    found, expected = made(record, tuple(args), kwargs), made(twin, tuple(args), kwargs)
    if isinstance(expected, tuple):
        assert isinstance(found, tuple)
        assert found[0] is expected[0]
        assert as_twin(found[1], record, twin) == expected[1]
    else:
        assert not isinstance(found, tuple)
        assert as_twin(repr(found), record, twin) == repr(expected)
        assert vars(found) == vars(expected) if hasattr(expected, "__dict__") else dataclasses.astuple(found) == dataclasses.astuple(expected)


def test_each_record_gets_a_new_object_from_a_default_factory() -> None:
    first, second = Counters("a"), Counters("b")
    first.seen["x"] = 1
    first.order.append("x")
    assert second.seen == {} and second.order == []
    assert Checked(1).tags is not Checked(1).tags


def test_post_init_runs_with_the_fields_set_and_its_errors_come_through() -> None:
    assert Checked(2, 5).span == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="7 > 5"):
        Checked(7, 5)


@pytest.mark.parametrize(("record", "twin"), [(FrozenRecord, FrozenTwin), (Checked, CheckedTwin)], ids=lambda cls: cls.__name__)
def test_a_frozen_record_refuses_changes_as_its_twin_does(record: type, twin: type) -> None:
    for cls in (record, twin):
        one = cls(1)
        first = dataclasses.fields(cls)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{first}'"):
            setattr(one, first, 2)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{first}'"):
            delattr(one, first)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'elsewhere'"):
            one.elsewhere = 1  # an attribute that is no field: refused on the class itself too

        class Child(cls):  # type: ignore[misc, valid-type]
            """A plain subclass: it may set attributes that are not fields, never the fields."""

        child = Child(1)
        child.elsewhere = 3
        del child.elsewhere
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(child, first, 2)


def test_a_frozen_record_pickles_copies_and_is_replaced_as_a_dataclass() -> None:
    record = Checked(1, 4, [7])
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record and copy.copy(record) == record
    assert dataclasses.replace(record, high=9) == Checked(1, 9, [7])
    with pytest.raises(ValueError):
        dataclasses.replace(record, low=99)


def test_a_class_of_another_shape_is_left_to_dataclasses_and_still_works() -> None:
    assert KeywordOnly(1, second=3).second == 3
    with pytest.raises(TypeError):
        KeywordOnly(1, 3)  # type: ignore[misc]
    assert str(inspect.signature(KeywordOnly)) == "(first: 'int', *, second: 'int' = 2) -> None"
    with pytest.raises(dataclasses.FrozenInstanceError):
        KeywordOnly(1).first = 2  # type: ignore[misc]


def test_a_record_without_a_default_after_one_with_a_default_is_refused_as_dataclasses_refuses_it() -> None:
    messages = []
    for decorator in (record_class, dataclasses.dataclass):
        with pytest.raises(TypeError) as raised:

            @decorator
            class Wrong:
                """Its second field has no default."""

                first: int = 0
                second: int

        messages.append(str(raised.value))
    assert messages[0] == messages[1] == "non-default argument 'second' follows default argument"


def test_a_record_of_the_common_shapes_compiles_nothing_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = compile

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(str(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr("builtins.compile", counting)
    monkeypatch.setattr(dataclasses, "_create_fn", lambda *args, **kwargs: pytest.fail("dataclasses compiled a method"))

    def shaped() -> list[type]:
        @record_class(frozen=True)
        class Point:
            """Two numbers."""

            x: int
            y: int = 0

        @record_class
        class Bag:
            """A mutable record with a factory."""

            items: list[int] = dataclasses.field(default_factory=list)

        return [Point, Bag]

    first = shaped()
    compiled_first = len(compiled)
    second = shaped()  # the same shapes again: their templates are made already
    assert len(compiled) == compiled_first <= 2
    assert first[0](1) == first[0](1, 0) and second[0](1) != first[0](1)  # other classes: never equal
    assert second[1]().items == []


def test_an_undocumented_record_is_documented_by_its_signature_as_its_twin_without_reading_a_c_signature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # object's own signature is read from its C text signature, which compiles tokenize's patterns
    # on first use: a record makes its __init__ itself, so dataclasses must not document it by object's.
    read: list[object] = []
    original = inspect.signature

    def signature(target: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        found = original(target, *args, **kwargs)
        read.append(found)
        return found

    monkeypatch.setattr(inspect, "signature", signature)

    @record_class(frozen=True)
    class Undocumented:
        left: int
        right: str = "r"

    @dataclasses.dataclass(frozen=True)
    class UndocumentedTwin:
        left: int
        right: str = "r"

    assert Undocumented.__doc__ == UndocumentedTwin.__doc__.replace("UndocumentedTwin", "Undocumented") == "Undocumented(left: 'int', right: 'str' = 'r')"
    assert [str(found) for found in read[:1]] == ["(left: 'int', right: 'str' = 'r') -> None"]  # the record's own, then the twin's


def test_the_packages_init_templates_are_written_for_exactly_its_shapes() -> None:
    written = (REPO / "agenthropic_site" / "records" / "inits.py").read_text()
    assert written == records.init_templates_source(records.package_shapes()), (
        "a record of a new shape (or one gone): run python -c 'from agenthropic_site import records; records.write_init_templates()'"
    )
    for shape, template in inits.INITS.items():
        namespace: dict[str, Any] = {}
        exec(compile(records._init_source(shape), "<record_class>", "exec"), {}, namespace)  # noqa: S102 - the template's own text
        compiled = namespace["__init__"].__code__
        made = template.__code__
        assert (made.co_code, made.co_names, made.co_consts, made.co_varnames) == (
            compiled.co_code, compiled.co_names, compiled.co_consts, compiled.co_varnames), shape


def test_importing_the_package_compiles_no_init() -> None:
    # A fresh process: this one has made its templates already.
    counted = (
        "import builtins\n"
        "compiled = []\n"
        "real = builtins.compile\n"
        "def counting(source, *args, **kwargs):\n"
        "    if isinstance(source, str) and source.startswith('def __init__'):\n"
        "        compiled.append(source)\n"
        "    return real(source, *args, **kwargs)\n"
        "builtins.compile = counting\n"
        "from agenthropic_site import records\n"
        "shapes = records.package_shapes()\n"
        "print(len(shapes), len(compiled))\n"
    )
    done = subprocess.run([sys.executable, "-c", counted], capture_output=True, text=True, check=True, cwd=REPO)
    shapes, compiled = map(int, done.stdout.split())
    assert shapes >= 30 and compiled == 0
