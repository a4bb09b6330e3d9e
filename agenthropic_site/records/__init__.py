"""`record_class`: a dataclass whose methods are shared functions or shared code, not code compiled for each class.

Python 3.11's `@dataclass` writes the source of every method it adds and compiles it with `exec`:
423 compilations for the package's classes, 36-49 ms of the 0.13-0.18 s a build spent importing
(measured with `dataclasses._create_fn` timed), which a one-append build pays every run. Here
`__eq__`, `__hash__`, `__repr__` and the orderings are one function each for every record, reading
the class's fields through an `operator.attrgetter` made once per class; a frozen class's
`__setattr__` and `__delattr__` are closures over its class and field names; and `__init__` is the
code of a template for each shape (how many fields, frozen or not, which have a default factory,
whether `__post_init__` runs), renamed for the class with `CodeType.replace`. The templates of the
package's own shapes are written in records/inits.py, so Python caches their bytecode as any
module's (compiling them at each import took 6-9 ms); another shape's is compiled once here.
They behave as the generated ones do: the same signature, defaults, factories, errors, fields
compared, hashed and shown (tests/test_records.py). A class with slots, keyword-only or
init-less fields, `InitVar`s or a dataclass base is left to `dataclasses` whole: the package has three, with slots.
"""

from __future__ import annotations

import dataclasses
import inspect  # dataclasses imports it: no cost
import operator
from _thread import get_ident
from collections.abc import Callable, Iterable
from functools import cache
from types import CodeType, FunctionType
from typing import Any, TypeVar, dataclass_transform, overload

from agenthropic_site.records.inits import INITS

_T = TypeVar("_T")
Values = Callable[[Any], tuple[Any, ...]]
_SHOWING: set[tuple[int, int]] = set()  # (record, thread) pairs whose repr is being made: a record inside itself shows "..."


class _Factory:
    """The default a field with a default factory shows in `__init__`'s signature: the factory is called instead."""

    def __repr__(self) -> str:
        return "<factory>"


# dataclasses' own marker when it has one (every version since 3.7): signatures then equal the generated ones.
_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", _Factory())


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


def _template_name(index: int) -> str:
    return f"_field{index}"


Shape = tuple[int, bool, tuple[int, ...], bool]  # an __init__'s: how many fields, frozen, which have a factory, __post_init__


def _init_source(shape: Shape, name: str = "__init__") -> str:
    """Write the `__init__` of a shape: `count` fields named `_field0`... (renamed for each class that has it)."""
    count, frozen, factories, post_init = shape
    lines = []
    for index in range(count):
        field_name = _template_name(index)
        value = f"_factory{index}() if {field_name} is _FACTORY else {field_name}" if index in factories else field_name
        # A frozen record's own __setattr__ refuses: set as dataclasses does, through object's.
        lines.append(f"    _set(self, {field_name!r}, {value})" if frozen else f"    self.{field_name} = {value}")
    if post_init:
        lines.append("    self.__post_init__()")
    return f"def {name}(self, {', '.join(map(_template_name, range(count)))}):\n" + ("\n".join(lines) or "    pass") + "\n"


@cache
def _init_template(count: int, frozen: bool, factories: tuple[int, ...], post_init: bool) -> CodeType:
    """Return the code of a shape's `__init__`: compiled with the package (records/inits.py) for its own shapes, else here."""
    shape = (count, frozen, factories, post_init)
    made = INITS.get(shape)
    if made is not None:
        # Compiling the package's shapes here took 6-9 ms of every build's imports; their bytecode is cached as any module's.
        return made.__code__
    namespace: dict[str, Any] = {}
    exec(compile(_init_source(shape), "<record_class>", "exec"), {}, namespace)  # noqa: S102 - our own text, made of indexes
    return namespace["__init__"].__code__


def init_templates_source(shapes: Iterable[Shape]) -> str:
    """Write records/inits.py: the `__init__` of each of these shapes, and INITS naming them by shape."""
    ordered = sorted(set(shapes))
    factory_names = max((index for shape in ordered for index in shape[2]), default=-1) + 1
    head = [
        '"""The `__init__` of each shape of the package\'s records, compiled with the package (`records._init_template`).',
        "",
        "Written by `python -c 'from agenthropic_site import records; records.write_init_templates()'`; do not edit.",
        "tests/test_records.py checks it holds exactly the shapes of the package's records. The names",
        "below stand for what each record's `__init__` is given when it is made from one of these.",
        '"""',
        "",
        "# ruff: noqa: E501 - a record of many fields has a long signature",
        "",
        "from typing import Any",
        "",
        "_set: Any = object.__setattr__",
        "_FACTORY: Any = None",
        *(f"_factory{index}: Any = None" for index in range(factory_names)),
    ]
    bodies = [_init_source(shape, f"_init{number}") for number, shape in enumerate(ordered)]
    table = ["INITS: dict[tuple[int, bool, tuple[int, ...], bool], Any] = {", *(f"    {shape!r}: _init{number}," for number, shape in enumerate(ordered)), "}"]
    return "\n".join(head) + "\n\n\n" + "\n\n".join(bodies) + "\n\n" + "\n".join(table) + "\n"


# Jinja's code of the default templates (render/compiled/): run by render/theme.py in a namespace it
# gives each, never imported (it names the environment it runs in).
NOT_MODULES = ("agenthropic_site.render.compiled.",)


def package_shapes() -> set[Shape]:
    """Import every module of the package and return the `__init__` shapes of its records."""
    import importlib
    import pkgutil
    from pathlib import Path

    shapes: set[Shape] = set()
    for module in pkgutil.walk_packages([str(Path(__file__).parent.parent)], "agenthropic_site."):
        if module.name.startswith(NOT_MODULES):
            continue
        for value in vars(importlib.import_module(module.name)).values():
            shape = getattr(value, "__record_init__", None) if isinstance(value, type) else None
            if shape is not None and value.__module__ == module.name:
                shapes.add(shape)
    return shapes


def write_init_templates() -> None:
    """Write records/inits.py for the shapes of the package's records (after a record of a new shape is added)."""
    from pathlib import Path

    (Path(__file__).parent / "inits.py").write_text(init_templates_source(package_shapes()))


def _shape(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Shape:
    """Return the shape of a record's `__init__`."""
    factories = tuple(index for index, f in enumerate(fields) if f.default_factory is not dataclasses.MISSING)
    return len(fields), frozen, factories, hasattr(cls, "__post_init__")


def _make_init(cls: type, fields: tuple[dataclasses.Field[Any], ...], shape: Shape) -> Callable[..., None]:
    """Return `cls.__init__`: the template of its shape, with the fields' names, defaults and factories."""
    renamed = {_template_name(index): f.name for index, f in enumerate(fields)}

    def rename(names: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(renamed.get(name, name) if isinstance(name, str) else name for name in names)

    template = _init_template(*shape)
    code = template.replace(
        co_varnames=rename(template.co_varnames), co_names=rename(template.co_names), co_consts=rename(template.co_consts),
        co_name="__init__", co_qualname=f"{cls.__qualname__}.__init__",
    )
    namespace: dict[str, Any] = {"__builtins__": __builtins__, "_set": object.__setattr__, "_FACTORY": _FACTORY}
    defaults = []
    for index, f in enumerate(fields):
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{index}"] = f.default_factory
            defaults.append(_FACTORY)
        elif f.default is not dataclasses.MISSING:
            defaults.append(f.default)
        elif defaults:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    init = FunctionType(code, namespace, "__init__", tuple(defaults) or None)
    init.__qualname__ = code.co_qualname
    init.__module__ = cls.__module__
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return init


def _frozen_guards(owner: type[Any], names: frozenset[str]) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    """Return a frozen class's `__setattr__` and `__delattr__`, as dataclasses writes them."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    for guard in (__setattr__, __delattr__):
        guard.__qualname__ = f"{owner.__qualname__}.{guard.__name__}"
        guard.__module__ = owner.__module__
    return __setattr__, __delattr__


def _made_here(cls: type, slots: bool) -> bool:
    """Tell whether this module makes the class's `__init__` and guards (else dataclasses makes them all)."""
    if slots or "__init__" in cls.__dict__ or any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    annotations = cls.__dict__.get("__annotations__", {})
    for name in annotations:
        value = cls.__dict__.get(name)
        if name == "self" or (isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is True)):
            return False
    kinds = " ".join(annotations.values()) if all(isinstance(kind, str) for kind in annotations.values()) else None
    # InitVar, ClassVar and KW_ONLY change what __init__ takes: left to dataclasses (none of the package's has them).
    return kinds is not None and not any(word in kinds for word in ("InitVar", "ClassVar", "KW_ONLY"))


@overload
def record_class(cls: type[_T], /) -> type[_T]: ...


@overload
def record_class(*, frozen: bool = False, order: bool = False, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record_class(cls: type[_T] | None = None, /, *, frozen: bool = False, order: bool = False, slots: bool = False) -> Any:
    """Make a class a dataclass (`frozen`, `order` and `slots` as there) with the shared `__eq__`, `__hash__`, `__repr__` and orderings."""

    def wrap(cls: type[_T]) -> type[_T]:
        own = set(cls.__dict__)  # methods the class writes itself are kept, as @dataclass keeps them
        documented = bool(cls.__doc__)
        here = _made_here(cls, slots)
        if here and not documented:
            # dataclasses documents an undocumented class by its signature, here object's own until
            # the __init__ below is set: read from the C text signature, which compiles tokenize's
            # patterns (1.8 ms of a one-append build's imports). The doc is written below instead.
            cls.__doc__ = "-"
        made: Any = dataclasses.dataclass(cls, init=not here, eq=False, repr=False, frozen=frozen and not here, slots=slots)
        fields = dataclasses.fields(made)
        if here:
            made.__record_init__ = shape = _shape(made, fields, frozen)
            made.__init__ = _make_init(made, fields, shape)
            if frozen:
                for name in ("__setattr__", "__delattr__"):
                    if name in own:
                        raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
                made.__setattr__, made.__delattr__ = _frozen_guards(made, frozenset(f.name for f in fields))
            if not documented:  # as dataclasses documents a class that has no docstring: by its signature
                made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
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
