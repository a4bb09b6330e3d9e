"""The view codec: stored views round-trip, the bytes stay what they were, and no field is lost or invented."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenthropic_site.cache import Cache, codec
from agenthropic_site.cache.codec import CodecError
from agenthropic_site.cost import load_price_table
from agenthropic_site.cost.breakdown import WhatIf
from agenthropic_site.model import stored
from agenthropic_site.model.views import SessionSummary, SessionView, compute_views
from agenthropic_site.parse.model import Tokens
from conftest import differences


def previous_encoding(value: Any) -> bytes:
    """Encode as the cache did before the codec (orjson, Decimals as strings, OPT_SORT_KEYS)."""
    return orjson.dumps(value, default=lambda v: str(v) if isinstance(v, Decimal) else None, option=orjson.OPT_SORT_KEYS)


@pytest.fixture(scope="module")
def demo_rows(demo_site: Path) -> list[tuple[str, bytes, bytes]]:
    """Every stored (session id, view, summary) of the demo build."""
    cache = Cache.reader(demo_site.parent / "cache")
    try:
        return [(sid, bytes(body), bytes(summary)) for sid, body, summary in cache.conn.execute(
            "SELECT session_id, body, summary FROM views ORDER BY session_id")]
    finally:
        cache.close()


@pytest.fixture(scope="module")
def demo_usage(demo_site: Path) -> dict[str, bytes]:
    """Every stored view's owned requests (stored.encode_usage), by session id."""
    cache = Cache.reader(demo_site.parent / "cache")
    try:
        return {sid: bytes(usage) for sid, usage in cache.conn.execute("SELECT session_id, usage FROM views")}
    finally:
        cache.close()


def test_every_stored_view_and_summary_of_the_demo_round_trips_byte_for_byte(demo_rows: list[tuple[str, bytes, bytes]],
                                                                             demo_usage: dict[str, bytes]) -> None:
    assert len(demo_rows) > 10
    assert any(orjson.loads(body)["agents"] and orjson.loads(body)["what_if"] for _, body, _ in demo_rows)  # the rich shapes are there
    assert sum(len(orjson.loads(usage)) for usage in demo_usage.values()) > 50
    for sid, body, summary in demo_rows:
        view = stored.decode_view(body, demo_usage[sid])
        assert stored.decode_view(stored.encode_view(view), stored.encode_usage(view)) == view
        # The requests are kept once, beside the body, not in it too.
        assert stored.encode_view(view) == body == previous_encoding(dataclasses.replace(view, context=[]))
        assert stored.encode_usage(view) == demo_usage[sid] and len(view.context) == len(orjson.loads(demo_usage[sid]))
        brief = stored.decode_summary(summary)
        assert stored.decode_summary(stored.encode_summary(brief)) == brief
        assert stored.encode_summary(brief) == summary == previous_encoding(brief)


def test_computed_views_encode_as_before_and_are_exactly_their_decoded_copies(demo_site: Path, demo_rows: list[tuple[str, bytes, bytes]],
                                                                              demo_usage: dict[str, bytes]) -> None:
    cache = Cache.reader(demo_site.parent / "cache")
    try:
        views = compute_views(cache, [sid for sid, _, _ in demo_rows], load_price_table())
    finally:
        cache.close()
    for sid, body, _ in demo_rows:
        view = views[sid]
        assert stored.encode_view(view) == previous_encoding(dataclasses.replace(view, context=[])) == body
        assert stored.encode_usage(view) == demo_usage[sid]
        # The render of a session changed alone takes the view computed (model/stored.py ComputedAlone):
        # it must be its decoded copy in every type, key order and digit, or the page would differ.
        assert differences(view, stored.decode_view(body, demo_usage[sid])) == [], sid


@pytest.fixture(scope="module")
def a_view(demo_rows: list[tuple[str, bytes, bytes]]) -> dict[str, Any]:
    """A stored view (as parsed JSON) with agents, compactions and what-ifs."""
    raws = [orjson.loads(body) for _, body, _ in demo_rows]
    return max(raws, key=lambda raw: (bool(raw["compactions"]), len(raw["agents"]), len(raw["what_if"])))


def broken(raw: dict[str, Any], change: Any) -> bytes:
    copy = orjson.loads(orjson.dumps(raw))
    change(copy)
    return orjson.dumps(copy)


def test_a_missing_field_is_an_error_not_a_default(a_view: dict[str, Any]) -> None:
    with pytest.raises(CodecError, match=r"^\$: SessionView: missing field\(s\) status$"):
        stored.decode_view(broken(a_view, lambda raw: raw.pop("status")), b"[]")  # status has a default
    with pytest.raises(CodecError, match=r"^\$\.agents\[0\]\.tokens: Tokens: missing field\(s\) output$"):
        stored.decode_view(broken(a_view, lambda raw: raw["agents"][0]["tokens"].pop("output")), b"[]")


def test_an_unknown_key_is_an_error(a_view: dict[str, Any]) -> None:
    with pytest.raises(CodecError, match=r"SessionView: unknown key\(s\) renamed_field"):
        stored.decode_view(broken(a_view, lambda raw: raw.__setitem__("renamed_field", 1)), b"[]")
    with pytest.raises(CodecError, match=r"^\$\.compactions\[0\]: CompactionView: missing field\(s\) trigger; unknown key\(s\) trigger_kind$"):
        stored.decode_view(broken(a_view, lambda raw: raw["compactions"][0].__setitem__("trigger_kind", raw["compactions"][0].pop("trigger"))), b"[]")


@pytest.mark.parametrize(("change", "where"), [
    (lambda raw: raw.__setitem__("title", 7), r"\$\.title: expected str, got int 7"),
    (lambda raw: raw["agents"][0].__setitem__("has_transcript", 1), r"\$\.agents\[0\]\.has_transcript: expected bool"),
    (lambda raw: raw["agents"][0].__setitem__("depth", True), r"\$\.agents\[0\]\.depth: expected int, got bool"),
    (lambda raw: raw["agents"][-1].__setitem__("cost", "12 dollars"), r"\$\.agents\[\d+\]\.cost: expected a decimal string"),
    (lambda raw: raw["agents"][0].__setitem__("cost", 1.5), r"\$\.agents\[0\]\.cost: expected a decimal string, got float"),
    (lambda raw: raw.__setitem__("versions", "2.1"), r"\$\.versions: expected a list"),
    (lambda raw: raw["what_if"].__setitem__(0, [1, 2]), r"\$\.what_if\[0\]: expected an object \(WhatIf\)"),
    (lambda raw: raw["by_model"].__setitem__("m", [raw["tokens"]]), r"\$\.by_model\.m: expected a list of 2 \(tuple\)"),
    (lambda raw: raw["spend_over_time"].append(["2026-01-01", None]), r"\$\.spend_over_time\[\d+\]\[1\]: expected Decimal \| str, got null"),
])
def test_a_value_of_the_wrong_shape_is_an_error_naming_where(a_view: dict[str, Any], change: Any, where: str) -> None:
    with pytest.raises(CodecError, match=f"^{where}"):
        stored.decode_view(broken(a_view, change), b"[]")


def test_damaged_bytes_are_a_codec_error_the_cache_derives_again() -> None:
    for body in (b"", b"{", b"[]", b"null", b'{"session_id": "x"}'):
        with pytest.raises(stored.DAMAGED):
            stored.decode_view(body, b"[]")
        with pytest.raises(stored.DAMAGED):
            stored.decode_summary(body)


def test_damaged_requests_of_a_view_are_a_codec_error_the_cache_derives_again(a_view: dict[str, Any]) -> None:
    body = orjson.dumps(a_view)
    good = ["2026-01-01T10:00:00.000Z", "m", 1, 2, 3, 4, 5, "0.5", "an-agent"]
    assert stored.decode_view(body, orjson.dumps([good])).context[0].context == 1 + 3 + 4 + 5
    for usage in (b"", b"{", b"null", b"[[1]]", orjson.dumps([good[:-1]]), orjson.dumps([[*good[:7], "half a dollar", good[8]]]),
                  orjson.dumps([[*good[:2], "1", *good[3:]]]), orjson.dumps([[*good[:3], 2.5, *good[4:]]]), orjson.dumps([[*good[:7], 0.5, good[8]]]),
                  orjson.dumps([[*good[:8], None]])):
        with pytest.raises(stored.DAMAGED):
            stored.decode_view(body, usage)


# The point of the codec: a field added to a stored class, with a default, comes back with its value.
@dataclass(frozen=True)
class Leaf:
    name: str
    amount: Decimal
    added: int = 0  # the new field


@dataclass
class Tree:
    label: str
    leaves: list[Leaf]
    totals: dict[str, tuple[Tokens, Decimal]]
    parent: Tree | None = None
    ratio: float = 1.0
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = "default note"  # the new field


def test_a_new_defaulted_field_round_trips_with_its_value() -> None:
    tree = Tree("t", [Leaf("a", Decimal("1.50"), added=7)], {"m": (Tokens(1, 2, 3, 4, 5), Decimal("0.1"))},
                parent=Tree("p", [], {}), ratio=2.0, tags=("x", "y"), extra={"k": [1, None]}, note="kept")
    back = codec.decode(Tree, codec.encode(tree))
    assert back == tree
    assert back.note == "kept" and back.leaves[0].added == 7 and back.parent is not None and back.parent.note == "default note"
    # Bytes written before the field existed are an error (the cache derives the view again), not a silent default.
    old = orjson.loads(codec.encode(tree))
    del old["leaves"][0]["added"]
    with pytest.raises(CodecError, match=r"^\$\.leaves\[0\]: Leaf: missing field\(s\) added$"):
        codec.decode(Tree, orjson.dumps(old))


def test_the_real_view_classes_round_trip_their_non_default_values() -> None:
    view = SessionView("s", "f", "p", None, None, None, None, [], None, None, None, None, [], [], {}, status="completed",
                       main_state="empty", under_reported={"count": 2}, copies_counted_in={"o": 1}, collisions=3,
                       what_if=[WhatIf("a", "b", Decimal("1"), Decimal("-0.5"))], spend_over_time=[("t", "1.25")])
    assert codec.decode(SessionView, codec.encode(view)) == view
    summary = SessionSummary("s", "p", None, None, None, None, None, None, None, [], [], 0, 0, Tokens(1), None, {}, {}, {}, 0, [], "d",
                             main_state="absent", absent_agents=["x"], reported_tokens=9, under_reported={"n": 1}, status="error")
    assert codec.decode(SessionSummary, codec.encode(summary)) == summary


def test_a_class_the_codec_cannot_store_is_refused_when_first_used() -> None:
    @dataclass
    class Hidden:
        _secret: int = 0  # orjson never writes it

    @dataclass
    class Keyed:
        values: dict[int, str]

    with pytest.raises(TypeError, match="private or init=False"):
        codec.decode(Hidden, b"{}")
    with pytest.raises(TypeError, match="keys are strings"):
        codec.decode(Keyed, b'{"values": {}}')


def test_keyword_only_fields_decode() -> None:
    @dataclass(kw_only=True)
    class Options:
        b: int
        a: str = "x"

    assert codec.decode(Options, codec.encode(Options(b=2, a="y"))) == Options(b=2, a="y")


money = st.decimals(allow_nan=False, allow_infinity=False, places=6)
tokens = st.builds(Tokens, *[st.integers(0, 10**12)] * 5)
leaves = st.builds(Leaf, st.text(), money, st.integers(-(2**63), 2**63 - 1))
json_values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3), max_leaves=8)
trees = st.recursive(
    st.builds(Tree, st.text(), st.lists(leaves, max_size=3), st.dictionaries(st.text(), st.tuples(tokens, money), max_size=3),
              ratio=st.floats(allow_nan=False, allow_infinity=False), tags=st.lists(st.text(), max_size=3).map(tuple),
              extra=st.dictionaries(st.text(), json_values, max_size=3), note=st.none() | st.text()),
    lambda inner: st.builds(Tree, st.text(), st.just([]), st.just({}), parent=inner), max_leaves=3)


@given(trees)
def test_any_tree_round_trips_and_reencodes_to_the_same_bytes(tree: Tree) -> None:
    body = codec.encode(tree)
    assert body == previous_encoding(tree)
    back = codec.decode(Tree, body)
    assert back == tree and codec.encode(back) == body


@given(st.lists(st.tuples(st.text(), money.map(str)), max_size=4), st.lists(st.builds(WhatIf, st.text(), st.text(), money, money), max_size=3))
def test_view_shapes_round_trip(spend: list[tuple[str, Decimal | str]], what_if: list[WhatIf]) -> None:
    view = SessionView("s", "f", "p", None, None, None, None, [], None, None, None, None, [], [], {}, what_if=what_if, spend_over_time=spend)
    assert codec.decode(SessionView, codec.encode(view)) == view


# -- the generated decoders -------------------------------------------------------------------

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "1.50", "-0", "NaN", "1e3", "x", "2026-01-01T00:00:00.000Z"]) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4)


def _mutated(data: st.DataObject, raw: dict[str, Any]) -> dict[str, Any]:
    """Change one place of a copy of `raw`: a value replaced, a key dropped or an unknown key added, anywhere in the tree."""
    copy = orjson.loads(orjson.dumps(raw))
    node: Any = copy
    while True:
        children = sorted(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not children:
            break
        key = data.draw(st.sampled_from(children))
        child = node[key]
        if not isinstance(child, (dict, list)) or not child or data.draw(st.booleans()):
            action = data.draw(st.sampled_from(["replace", "drop", "add"]))
            if action == "replace" or (action == "drop" and not isinstance(node, dict)):
                node[key] = data.draw(ANY_JSON)
            elif action == "drop":
                del node[key]
            elif isinstance(child, dict):
                child[data.draw(st.text(min_size=1, max_size=3))] = data.draw(ANY_JSON)
            else:
                node[key] = data.draw(ANY_JSON)
            break
        node = child
    return copy


def _shape(value: Any) -> Any:
    """Write a decoded value out with every type in it: a tuple is not a list, a float not an int (and a NaN is itself)."""
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, [_shape(getattr(value, item.name)) for item in dataclasses.fields(value)])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_shape(item) for item in value])
    if isinstance(value, dict):
        return ("dict", [(key, _shape(item)) for key, item in value.items()])
    return (type(value).__name__, repr(value))


def _outcome(decoder: Any, raw: Any) -> tuple[Any, ...]:
    """What a decoder makes of parsed JSON: its value (encoded, and with its types), or the error it raises."""
    try:
        value = decoder(orjson.loads(orjson.dumps(raw)))
    except CodecError as error:
        return ("refused", str(error))
    except Exception as error:  # noqa: BLE001 - whatever else either raises must be the same too
        return ("raised", type(error).__name__, str(error))
    return ("decoded", codec.encode(value), _shape(value))


@pytest.fixture(scope="module")
def a_summary(demo_rows: list[tuple[str, bytes, bytes]]) -> dict[str, Any]:
    """A stored summary (as parsed JSON) with models and prompts."""
    raws = [orjson.loads(summary) for _, _, summary in demo_rows]
    return max(raws, key=lambda raw: (len(raw["by_model"]), len(raw["prompts"])))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), summary=st.booleans())
def test_the_generated_decoders_take_and_refuse_exactly_what_the_checked_ones_do(
    data: st.DataObject, summary: bool, a_view: dict[str, Any], a_summary: dict[str, Any],
) -> None:
    cls, raw = (SessionSummary, a_summary) if summary else (SessionView, a_view)
    changed = _mutated(data, raw)
    assert _outcome(codec.generated_decoder(cls), changed) == _outcome(codec.dataclass_decoder(cls), changed)


def test_the_generated_decoders_build_what_the_checked_ones_build(demo_rows: list[tuple[str, bytes, bytes]]) -> None:
    assert codec.generated_decoder(SessionView) is not codec.dataclass_decoder(SessionView)
    for _, body, summary in demo_rows:
        for cls, data in ((SessionView, body), (SessionSummary, summary)):
            assert _outcome(codec.generated_decoder(cls), orjson.loads(data)) == _outcome(codec.dataclass_decoder(cls), orjson.loads(data))


def test_a_class_is_decoded_by_its_generated_decoder_once_enough_of_it_was_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_GENERATED", {})
    monkeypatch.setattr(codec, "_DECODED_BYTES", {})
    monkeypatch.setattr(codec, "GENERATE_AFTER_BYTES", 100)
    body = codec.encode(Leaf("a leaf", Decimal("1.50"), 7))
    assert len(body) < 100 <= 3 * len(body)
    made = []
    monkeypatch.setattr(codec, "_generated", lambda *args: made.append(args[0]) or codec.dataclass_decoder(args[0]))
    for _ in range(3):
        assert codec.decode(Leaf, body) == Leaf("a leaf", Decimal("1.50"), 7)
    assert made == [Leaf]  # written out once, when the JSON decoded reached the bound
    assert Leaf in codec._GENERATED


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, data=st.data())
def test_the_generated_decoders_of_any_tree_answer_as_the_checked_ones(tree: Tree, data: st.DataObject) -> None:
    # Tree holds what the stored views do not: a float, a class that contains itself, Any, kw-less defaults.
    raw = orjson.loads(codec.encode(tree))
    assert _outcome(codec.generated_decoder(Tree), raw) == _outcome(codec.dataclass_decoder(Tree), raw)
    assert codec.generated_decoder(Tree)(raw) == tree
    changed = _mutated(data, raw)
    assert _outcome(codec.generated_decoder(Tree), changed) == _outcome(codec.dataclass_decoder(Tree), changed)


@pytest.mark.parametrize(("field_name", "value"), [
    (name, value)
    for name, values in {
        "ratio": [True, False, 2, 2.5, "2.5", None],  # float: an int becomes one, a bool does not
        "label": [1, True, None, "", "x"],  # str
        "note": [None, 1, True, "x"],  # str | None
        "tags": [[], ["a"], [1], "a"],
        "parent": [None, 1, {}],
    }.items()
    for value in values
] + [(f"leaves.0.{name}", value) for name, values in {
    "amount": ["1.50", "-0", "NaN", "x", 1.5, 1, None, True],  # Decimal
    "added": [0, -3, True, 1.0, "1", None],  # int: a bool is not one
}.items() for value in values])
def test_each_field_check_the_generated_decoder_writes_out_answers_as_the_checked_one(field_name: str, value: Any) -> None:
    raw = orjson.loads(codec.encode(Tree("t", [Leaf("a", Decimal("1.5"), 2)], {})))
    *path, last = field_name.split(".")
    node = raw
    for step in path:
        node = node[int(step) if step.isdigit() else step]
    node[last] = value
    assert _outcome(codec.generated_decoder(Tree), raw) == _outcome(codec.dataclass_decoder(Tree), raw)
