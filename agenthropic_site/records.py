"""`record_class`: a dataclass whose comparisons, hash and repr are shared functions, not code compiled for each class.

Python 3.11's `@dataclass` writes the source of every method it adds and compiles it with `exec`:
423 compilations for the package's classes, about 40 ms of the 0.14 s a build spends importing
(measured with `dataclasses._create_fn` timed), which a one-append build pays every run. `__init__`
and a frozen class's `__setattr__` and `__delattr__` are still made by `dataclasses`; `__eq__`,
`__hash__`, `__repr__` and the orderings are one function each for every record, reading the
class's fields through an `operator.attrgetter` made once per class. They behave as the generated
ones do: the same fields compared, hashed and shown, the same results (tests/test_records.py).
"""

from __future__ import annotations

import dataclasses
import operator
from _thread import get_ident
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")
Values = Callable[[Any], tuple[Any, ...]]
_SHOWING: set[tuple[int, int]] = set()  # (record, thread) pairs whose repr is being made: a record inside itself shows "..."


def _getter(names: tuple[str, ...]) -> Values:
    """Return a function giving an object's values of these attributes as a tuple (of one, or none, too)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return lambda obj: ()


def _comparison(compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Return a comparison of two records of one class by their compared fields, in order (another class: NotImplemented)."""

    def compared(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            values = self.__record_compared__
            return compare(values(self), values(other))
        return NotImplemented

    return compared


_eq = _comparison(operator.eq)
_ORDER = {"__lt__": _comparison(operator.lt), "__le__": _comparison(operator.le), "__gt__": _comparison(operator.gt), "__ge__": _comparison(operator.ge)}


def _hash(self: Any) -> int:
    return hash(self.__record_hashed__(self))


def _repr(self: Any) -> str:
    key = (id(self), get_ident())
    if key in _SHOWING:
        return "..."
    _SHOWING.add(key)
    try:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self.__record_shown__, self.__record_shown_values__(self)))
        return f"{self.__class__.__qualname__}({shown})"
    finally:
        _SHOWING.discard(key)


@overload
def record_class(cls: type[_T], /) -> type[_T]: ...


@overload
def record_class(*, frozen: bool = False, order: bool = False, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record_class(cls: type[_T] | None = None, /, *, frozen: bool = False, order: bool = False, slots: bool = False) -> Any:
    """Make a class a dataclass (`frozen`, `order` and `slots` as there) with the shared `__eq__`, `__hash__`, `__repr__` and orderings."""

    def wrap(cls: type[_T]) -> type[_T]:
        own = set(cls.__dict__)  # methods the class writes itself are kept, as @dataclass keeps them
        made: Any = dataclasses.dataclass(cls, eq=False, repr=False, frozen=frozen, slots=slots)
        fields = dataclasses.fields(made)
        shown = tuple(f.name for f in fields if f.repr)
        # Static: a getter made of a lambda would otherwise be bound to the record it is looked up on.
        made.__record_compared__ = staticmethod(_getter(tuple(f.name for f in fields if f.compare)))
        made.__record_hashed__ = staticmethod(_getter(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))))
        made.__record_shown__ = shown
        made.__record_shown_values__ = staticmethod(_getter(shown))
        if "__repr__" not in own:
            made.__repr__ = _repr
        if "__eq__" not in own:
            made.__eq__ = _eq
        if "__hash__" not in own:
            # As @dataclass(eq=True): a frozen record hashes its compared fields; a mutable one is unhashable.
            made.__hash__ = _hash if frozen else None
        if order:
            for name, function in _ORDER.items():
                if name in own:
                    raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
                setattr(made, name, function)
        return made

    return wrap if cls is None else wrap(cls)
