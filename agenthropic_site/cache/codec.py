"""Encode dataclasses as JSON bytes and decode them back, driven by their type definitions.

The encoder is orjson (dataclasses as objects, Decimals as strings, keys sorted): its bytes are
what the cache has always stored. The decoder walks `dataclasses.fields()` and the resolved type
hints of the class it is given, so a field added to a class is read back like every other, and a
stored object must hold exactly the fields of its class: a missing field, an unknown key (a
renamed field) or a value of the wrong shape raises CodecError rather than coming back as a
default. Generic on purpose: the classes are arguments, nothing here imports them. A process that
decodes much of a class has its decoder written out as code (`generated_decoder`, as dataclasses
write `__init__`), which leaves anything it does not expect to the checked decoder that names the error.

Supported annotations: dataclasses (nested, also frozen or slotted), `list[X]`, `tuple[X, ...]`,
`tuple[X, Y]`, `dict[str, X]`, unions such as `X | None`, `Decimal` (stored as its string),
`str`, `int`, `float`, `bool`, `None` and `Any` (kept as JSON gave it).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

import orjson

T = TypeVar("T")
Decoder = Callable[[Any], Any]

SCALARS = (str, int, float, bool, type(None))


class CodecError(ValueError):
    """Raise when stored JSON does not match the type it is decoded into."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = []  # filled in outwards while the error unwinds

    def __str__(self) -> str:
        where = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in self.path)
        return f"${where}: {self.message}"


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} in a view")


def encode(value: Any) -> bytes:
    """Serialise a dataclass instance (dataclasses as objects, Decimals as strings, keys sorted)."""
    return orjson.dumps(value, default=_default, option=orjson.OPT_SORT_KEYS)


# JSON of one class a process decodes before it writes the class's decoder out as code: compiling
# the decoders of a session view's classes takes 3-5 ms, which pays for itself in about 1 MB (the
# 60 MB session's 3.2 MB view: 40 -> 27 ms), and 500 summaries (1 MB) would not pay it back.
GENERATE_AFTER_BYTES = 2 << 20
_DECODED_BYTES: dict[type, int] = {}


def decode(cls: type[T], data: bytes | str) -> T:
    """Rebuild an instance of `cls` from `encode`'s bytes."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise CodecError(f"not JSON: {error}") from None
    decoder = _GENERATED.get(cls)
    if decoder is None:
        seen = _DECODED_BYTES[cls] = _DECODED_BYTES.get(cls, 0) + len(data)
        decoder = generated_decoder(cls) if seen >= GENERATE_AFTER_BYTES else dataclass_decoder(cls)
    result: T = decoder(raw)
    return result


def convert(cls: type[T], raw: Any) -> T:
    """Build an instance of `cls` from already parsed JSON."""
    result: T = (_GENERATED.get(cls) or dataclass_decoder(cls))(raw)
    return result


def _kind(raw: Any) -> str:
    return "null" if raw is None else type(raw).__name__


def _fail(expected: str, raw: Any) -> CodecError:
    return CodecError(f"expected {expected}, got {_kind(raw)} {_short(raw)}")


def _short(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


# One decoder per dataclass, built on its first use: resolving type hints is far slower than decoding.
_DATACLASSES: dict[type, Decoder] = {}


def dataclass_decoder(cls: type) -> Decoder:
    """Return the (cached) decoder of one dataclass."""
    decoder = _DATACLASSES.get(cls)
    if decoder is None:
        decoder = _build_dataclass(cls)
    return decoder


def _build_dataclass(cls: type) -> Decoder:
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a dataclass")
    plan: list[tuple[str, Decoder]] = []
    size = 0
    positional = True
    name = cls.__name__

    def decode_dataclass(raw: Any) -> Any:
        if type(raw) is not dict:
            raise _fail(f"an object ({name})", raw)
        try:
            if len(raw) != size:
                raise KeyError
            # Every field looked up, and no more keys than fields: the keys are exactly the fields.
            values = [decoder(raw[field]) for field, decoder in plan]
        except KeyError:
            raise _keys_error(name, [field for field, _ in plan], raw) from None
        except CodecError as error:
            _locate(error, ((field, decoder, raw[field]) for field, decoder in plan))
            raise
        # Positional where the class allows it: faster than keywords, for thousands of objects.
        return cls(*values) if positional else cls(**{field: value for (field, _), value in zip(plan, values)})

    # Registered before its fields are planned, so a class that contains itself finds its decoder.
    known = len(_DATACLASSES)
    _DATACLASSES[cls] = decode_dataclass
    try:
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            if not field.init or field.name.startswith("_"):
                # orjson leaves out underscored fields and writes init=False ones only once set: they cannot round-trip.
                raise TypeError(f"{name}.{field.name}: the codec cannot store a private or init=False field")
            plan.append((field.name, _decoder(hints[field.name], f"{name}.{field.name}")))
            positional = positional and not field.kw_only
    except BaseException:
        for added in list(_DATACLASSES)[known:]:  # with the classes planned inside it, which may hold its half-built decoder
            del _DATACLASSES[added]
        raise
    size = len(plan)
    return decode_dataclass


# Each dataclass's decoder written out as code (`generated_decoder`), made when a process first needs it.
_GENERATED: dict[type, Decoder] = {}


def generated_decoder(cls: type) -> Decoder:
    """Return the decoder of one dataclass written out as code, nested classes' too (made once); it takes and refuses what the checked one does."""
    decoder = _GENERATED.get(cls)
    if decoder is None:
        checked = dataclass_decoder(cls)  # the class is one the codec can store, and this is what names an error
        _GENERATED[cls] = checked  # a class that contains itself meets its checked decoder
        try:
            hints = typing.get_type_hints(cls)
            fields = [(field.name, hints[field.name], _decoder(hints[field.name], f"{cls.__name__}.{field.name}", generated_decoder))
                      for field in dataclasses.fields(cls)]
            positional = not any(field.kw_only for field in dataclasses.fields(cls))
            decoder = _GENERATED[cls] = _generated(cls, fields, positional, checked)
        except BaseException:
            del _GENERATED[cls]
            raise
    return decoder


class _Unexpected(Exception):
    """A value the generated decoder does not take: the checked decoder says what is wrong with it."""


# Field types whose check the generated decoder writes out: an exact type (a bool is not an int).
_INLINE_TYPES = {str: "str", int: "int", bool: "bool"}


def _generated(cls: type, fields: list[tuple[str, Any, Decoder]], positional: bool, checked: Decoder) -> Decoder:
    """Return a decoder of `cls` with each scalar field's check written out, as dataclasses write `__init__`.

    A call a field, to a decoder that only compares a type, was most of a decode: the 60 MB
    session's view took 40 ms to convert, 27 ms so. Anything it does not expect (a missing or
    unknown key, a value of another type, a nested error) goes to `checked`, which raises the error
    that names it: both take exactly the same values, and build the same object from them.
    """
    namespace: dict[str, Any] = {"cls": cls, "checked": checked, "Decimal": Decimal, "InvalidOperation": InvalidOperation,
                                 "CodecError": CodecError, "_Unexpected": _Unexpected}
    body = []
    for index, (field, hint, decoder) in enumerate(fields):
        value = f"v{index}"
        body.append(f"        {value} = raw[{field!r}]")
        optional = _optional_of(hint)
        if hint in _INLINE_TYPES:
            body.append(f"        if type({value}) is not {_INLINE_TYPES[hint]}: raise _Unexpected")
        elif optional in _INLINE_TYPES:
            body.append(f"        if {value} is not None and type({value}) is not {_INLINE_TYPES[optional]}: raise _Unexpected")
        elif hint is Decimal:
            body.append(f"        if type({value}) is not str: raise _Unexpected")
            body.append(f"        {value} = Decimal({value})")
        elif optional is Decimal:
            body.append(f"        if {value} is not None:")
            body.append(f"            if type({value}) is not str: raise _Unexpected")
            body.append(f"            {value} = Decimal({value})")
        elif hint is float:
            body.append(f"        if type({value}) is not float:")
            body.append(f"            if type({value}) is not int: raise _Unexpected")
            body.append(f"            {value} = float({value})")
        elif decoder is not _identity:
            namespace[f"d{index}"] = decoder
            body.append(f"        {value} = d{index}({value})")
    values = [f"v{index}" for index in range(len(fields))]
    arguments = ", ".join(values if positional else [f"{field}={value}" for (field, _, _), value in zip(fields, values)])
    source = "\n".join([
        "def decode(raw):",
        f"    if type(raw) is not dict or len(raw) != {len(fields)}:",
        "        return checked(raw)",
        "    try:",
        *(body or ["        pass"]),
        "    except (KeyError, _Unexpected, CodecError, InvalidOperation):",
        "        pass",
        "    else:",
        f"        return cls({arguments})",
        "    return checked(raw)",  # outside the handler: its error is not chained to the one that sent it there
    ])
    exec(compile(source, f"<codec decoder of {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 - made of our own field names
    decode: Decoder = namespace["decode"]
    return decode


def _optional_of(hint: Any) -> Any:
    """Return X of `X | None`, else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = typing.get_args(hint)
        if len(members) == 2 and type(None) in members:
            return members[0] if members[1] is type(None) else members[1]
    return None


def _keys_error(name: str, fields: list[str], raw: dict[str, Any]) -> CodecError:
    missing, unknown = [field for field in fields if field not in raw], sorted(set(raw) - set(fields))
    parts = [f"missing field(s) {', '.join(missing)}"] if missing else []
    parts += [f"unknown key(s) {', '.join(unknown)}"] if unknown else []
    return CodecError(f"{name}: {'; '.join(parts)}")


def _locate(error: CodecError, attempts: typing.Iterable[tuple[str | int, Decoder, Any]]) -> None:
    """Prefix the error's path with the first key whose value fails again (errors are rare: decode twice)."""
    for key, decoder, value in attempts:
        try:
            decoder(value)
        except CodecError:
            error.path.insert(0, key)
            return


def _decoder(hint: Any, where: str, dataclass_of: Callable[[type], Decoder] = dataclass_decoder) -> Decoder:
    """Return the decoder of one annotation (`where` names it in errors about the type itself), nested dataclasses' by `dataclass_of`."""
    if hint is Any or hint is object:
        return _identity
    if hint is Decimal:
        return _decimal
    if hint in SCALARS:
        return _scalar(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return dataclass_of(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args, where, dataclass_of)
    if hint is list or origin is list:
        return _list(_decoder(args[0], where, dataclass_of) if args else _identity)
    if hint is dict or origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"{where}: JSON object keys are strings, not {args[0]!r}")
        return _dict(_decoder(args[1], where, dataclass_of) if args else _identity)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _tuple_of(_decoder(args[0], where, dataclass_of))
        return _fixed_tuple(tuple(_decoder(arg, where, dataclass_of) for arg in args))
    raise TypeError(f"{where}: the codec cannot decode {hint!r}")


def _identity(raw: Any) -> Any:
    return raw


def _decimal(raw: Any) -> Decimal:
    if type(raw) is not str:
        raise _fail("a decimal string", raw)
    try:
        return Decimal(raw)
    except InvalidOperation:
        raise _fail("a decimal string", raw) from None


def _scalar(kind: type) -> Decoder:
    if kind is float:
        def decode_float(raw: Any) -> float:
            if type(raw) is float:
                return raw
            if type(raw) is int:  # a JSON number without a fraction
                return float(raw)
            raise _fail("float", raw)
        return decode_float
    expected = _kind(None) if kind is type(None) else kind.__name__

    def decode_scalar(raw: Any) -> Any:
        if type(raw) is not kind:  # exact: a bool is not an int here
            raise _fail(expected, raw)
        return raw
    _SCALAR_KINDS[decode_scalar] = kind
    return decode_scalar


# The exact JSON type each scalar decoder accepts: a list of them is checked in one pass.
_SCALAR_KINDS: dict[Decoder, type] = {}


def _union(members: tuple[Any, ...], where: str, dataclass_of: Callable[[type], Decoder]) -> Decoder:
    none = type(None)
    if len(members) == 2 and none in members:
        # X | None, the common case: one test before X's decoder.
        inner = _decoder(members[0] if members[1] is none else members[1], where, dataclass_of)

        def decode_optional(raw: Any) -> Any:
            return None if raw is None else inner(raw)
        return decode_optional
    # A value already of a scalar member's JSON type is kept as is (so `Decimal | str` keeps the
    # string: the JSON cannot tell them apart, and the string loses nothing); else the first
    # other member that accepts it wins.
    kept = frozenset(member for member in members if member in SCALARS and member is not float)
    others = [_decoder(member, where, dataclass_of) for member in members if member not in kept]
    expected = " | ".join(getattr(member, "__name__", repr(member)) for member in members)

    def decode_union(raw: Any) -> Any:
        if type(raw) in kept:
            return raw
        for decoder in others:
            try:
                return decoder(raw)
            except CodecError:
                continue
        raise _fail(expected, raw)
    return decode_union


def _list(item: Decoder) -> Decoder:
    kinds = {_SCALAR_KINDS[item]} if item in _SCALAR_KINDS else None

    def decode_list(raw: Any) -> list[Any]:
        if type(raw) is not list:
            raise _fail("a list", raw)
        if item is _identity or (kinds is not None and kinds.issuperset(map(type, raw))):
            return raw  # JSON's own list, every item already of the one type it may hold (500 summaries' prompts: 3 ms)
        try:
            return [item(value) for value in raw]
        except CodecError as error:
            _locate(error, ((index, item, value) for index, value in enumerate(raw)))
            raise
    return decode_list


def _tuple_of(item: Decoder) -> Decoder:
    def decode_tuple(raw: Any) -> tuple[Any, ...]:
        if type(raw) is not list:
            raise _fail("a list (tuple)", raw)
        try:
            return tuple([item(value) for value in raw])
        except CodecError as error:
            _locate(error, ((index, item, value) for index, value in enumerate(raw)))
            raise
    return decode_tuple


def _fixed_tuple(items: tuple[Decoder, ...]) -> Decoder:
    size = len(items)
    if size == 2:  # the common (key, value) pair: no generator, no zip
        first, second = items

        def decode_pair(raw: Any) -> tuple[Any, ...]:
            if type(raw) is not list or len(raw) != 2:
                raise _fail("a list of 2 (tuple)", raw)
            try:
                return (first(raw[0]), second(raw[1]))
            except CodecError as error:
                _locate(error, ((0, first, raw[0]), (1, second, raw[1])))
                raise
        return decode_pair

    def decode_fixed(raw: Any) -> tuple[Any, ...]:
        if type(raw) is not list or len(raw) != size:
            raise _fail(f"a list of {size} (tuple)", raw)
        try:
            return tuple([item(value) for item, value in zip(items, raw)])
        except CodecError as error:
            _locate(error, ((index, item, value) for index, (item, value) in enumerate(zip(items, raw))))
            raise
    return decode_fixed


def _dict(value_decoder: Decoder) -> Decoder:
    def decode_dict(raw: Any) -> dict[str, Any]:
        if type(raw) is not dict:
            raise _fail("an object", raw)
        if value_decoder is _identity:
            return raw
        try:
            return {key: value_decoder(value) for key, value in raw.items()}
        except CodecError as error:
            _locate(error, ((key, value_decoder, value) for key, value in raw.items()))
            raise
    return decode_dict
