"""Time encoding and decoding the demo corpus's stored session views and summaries.

Usage: python bench/bench_codec.py [--cache DIR] [--repeat 7] [--rounds 200]
Without --cache it builds the demo corpus into a temporary folder first. Decoders compared, in
one run: the hand-written decoder the cache used before the codec (copied below as the
baseline), the generic dataclass codec (agenthropic_site.cache.codec), and msgspec when it is
installed (`pip install msgspec`; it is not a dependency) decoding into mirrors of the view
classes, dataclasses and Structs. Each figure is the best of --repeat runs of --rounds passes
over every row, in microseconds per row.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import timeit
import types
import typing
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from agenthropic_site.cache import Cache, codec  # noqa: E402
from agenthropic_site.cost.breakdown import WhatIf  # noqa: E402
from agenthropic_site.model.views import AgentView, CompactionView, SessionSummary, SessionView  # noqa: E402
from agenthropic_site.parse.model import Tokens  # noqa: E402

NOW = "2026-06-01T00:00:00Z"

try:
    import msgspec
except ImportError:  # measured only where it is installed
    msgspec = None  # type: ignore[assignment]


# The hand-written decoder of agenthropic_site/model/stored.py before the codec: the baseline.
def _tokens(raw: dict[str, int]) -> Tokens:
    return Tokens.from_dict(raw)


def _money(raw: str | None) -> Decimal | None:
    return None if raw is None else Decimal(raw)


def hand_decode_view(body: bytes) -> SessionView:
    """Rebuild a SessionView field by field (the old decoder)."""
    raw = orjson.loads(body)
    agents = [
        AgentView(
            **{key: raw_agent[key] for key in (
                "agent_id", "parent_agent_id", "kind", "edge_source", "agent_type", "description", "status", "outcome_cause",
                "notification_status", "spawn_tool_use_id", "first_seen_at", "last_seen_at", "depth", "requests", "children",
                "has_transcript", "reported")},
            tokens=_tokens(raw_agent["tokens"]),
            cost=Decimal(raw_agent["cost"]),
            subtree_tokens=_tokens(raw_agent["subtree_tokens"]),
            subtree_cost=Decimal(raw_agent["subtree_cost"]),
        )
        for raw_agent in raw["agents"]
    ]
    compactions = [CompactionView(**{**c, "cost_before": _money(c["cost_before"])}) for c in raw["compactions"]]
    plain = {key: raw[key] for key in (
        "session_id", "fingerprint", "project", "title", "title_source", "cwd", "git_branch", "versions", "started_at", "ended_at",
        "main_ended_at", "excluded_reason", "warnings", "line_errors", "unknown_types", "status", "edges", "unlinked_agents",
        "collisions", "graph_problems", "critical_path", "prompts", "main_state", "under_reported", "copies_counted_in")}
    return SessionView(
        **plain,
        tokens=_tokens(raw["tokens"]),
        cost=_money(raw["cost"]),
        agents=agents,
        compactions=compactions,
        by_model={model: (_tokens(tokens), Decimal(cost)) for model, (tokens, cost) in raw["by_model"].items()},
        cost_by_day={day: Decimal(cost) for day, cost in raw["cost_by_day"].items()},
        cost_by_category={name: Decimal(cost) for name, cost in raw["cost_by_category"].items()},
        segments=[Decimal(cost) for cost in raw["segments"]],
        what_if=[WhatIf(w["source"], w["target"], Decimal(w["cost"]), Decimal(w["delta"])) for w in raw["what_if"]],
        spend_over_time=[(at, cost) for at, cost in raw["spend_over_time"]],
    )


def hand_decode_summary(body: bytes) -> SessionSummary:
    """Rebuild a SessionSummary field by field (the old decoder)."""
    raw = orjson.loads(body)
    return SessionSummary(
        **{key: raw[key] for key in (
            "session_id", "project", "title", "cwd", "started_at", "ended_at", "excluded_reason", "main_status", "main_last_seen",
            "open_last_seen", "agent_ids", "compactions", "failed_agents", "collisions", "prompts", "view_digest", "main_state",
            "absent_agents", "reported_tokens", "under_reported")},
        tokens=_tokens(raw["tokens"]),
        cost=_money(raw["cost"]),
        by_model={model: (_tokens(tokens), Decimal(cost)) for model, (tokens, cost) in raw["by_model"].items()},
        cost_by_day={day: Decimal(cost) for day, cost in raw["cost_by_day"].items()},
        cost_by_category={name: Decimal(cost) for name, cost in raw["cost_by_category"].items()},
    )


def mirror(cls: type, make: Callable[[str, list[tuple[str, Any]]], type], made: dict[type, type]) -> type:
    """Return a copy of a dataclass msgspec accepts: every field required, `Decimal | str` read as str."""
    if cls not in made:
        hints = typing.get_type_hints(cls)
        made[cls] = make(f"{cls.__name__}Mirror", [(field.name, _mirror_hint(hints[field.name], make, made)) for field in dataclasses.fields(cls)])
    return made[cls]


def _mirror_hint(hint: Any, make: Callable[[str, list[tuple[str, Any]]], type], made: dict[type, type]) -> Any:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return mirror(hint, make, made)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None or not args:
        return hint
    subs = tuple(arg if arg is Ellipsis else _mirror_hint(arg, make, made) for arg in args)
    if origin in (typing.Union, types.UnionType):
        if set(args) == {Decimal, str}:  # msgspec takes one str-like type per union; the codec keeps the string too
            return str
        return typing.Union[subs]  # noqa: UP007 (built from a tuple)
    return origin[subs]  # list[...], dict[...], tuple[...]


def build_demo(cache: Path, out: Path) -> None:
    """Build the demo corpus (its exit code is 1: some demo sessions are left out of the totals)."""
    done = subprocess.run([sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(REPO / "fixtures" / "corpus"),
                           "--out", str(out), "--cache", str(cache), "--now", NOW, "-q"], cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"the demo build failed: {done.stderr}")


def read_rows(folder: Path) -> tuple[list[bytes], list[bytes]]:
    """Return every stored view body and summary, as the build reads them."""
    cache = Cache.reader(folder)
    try:
        summaries = [body for _, body in cache.view_summaries() if body is not None]
        bodies = [body for body in (cache.view_body(sid) for sid in cache.session_ids()) if body is not None]
    finally:
        cache.close()
    return bodies, summaries


def best(function: Callable[[Any], object], rows: list[Any], rounds: int, repeat: int) -> float:
    """Return the best time of applying `function` to one row, in microseconds."""
    return min(timeit.repeat(lambda: [function(row) for row in rows], number=rounds, repeat=repeat)) / rounds / len(rows) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="a built demo cache folder (default: build one now)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.cache
        if folder is None:
            folder = Path(scratch) / "cache"
            build_demo(folder, Path(scratch) / "site")
        bodies, summaries = read_rows(folder)

    # The codec must read what the old decoder read and write the bytes it was given.
    for body in bodies:
        assert codec.decode(SessionView, body) == hand_decode_view(body) and codec.encode(codec.decode(SessionView, body)) == body
    for body in summaries:
        assert codec.decode(SessionSummary, body) == hand_decode_summary(body) and codec.encode(codec.decode(SessionSummary, body)) == body
    views = [codec.decode(SessionView, body) for body in bodies]
    sums = [codec.decode(SessionSummary, body) for body in summaries]

    decoders: list[tuple[str, Callable[[bytes], object], Callable[[bytes], object]]] = [
        ("hand-written (before)", hand_decode_view, hand_decode_summary),
        ("dataclass codec", lambda body: codec.decode(SessionView, body), lambda body: codec.decode(SessionSummary, body)),
    ]
    if msgspec is not None:
        dc_made: dict[type, type] = {}
        dc_view, dc_summary = (mirror(cls, lambda name, fields: dataclasses.make_dataclass(name, fields), dc_made) for cls in (SessionView, SessionSummary))
        st_made: dict[type, type] = {}

        def struct(name: str, fields: list[tuple[str, Any]]) -> type:
            return msgspec.defstruct(name, fields, forbid_unknown_fields=True)
        st_view, st_summary = (mirror(cls, struct, st_made) for cls in (SessionView, SessionSummary))
        dv, ds, sv, ss = (msgspec.json.Decoder(cls) for cls in (dc_view, dc_summary, st_view, st_summary))  # type: ignore[var-annotated]
        decoders += [("msgspec -> dataclasses", dv.decode, ds.decode), ("msgspec -> Structs", sv.decode, ss.decode)]

    print(f"{len(bodies)} views ({sum(map(len, bodies)) / len(bodies) / 1024:.1f} KB each), {len(summaries)} summaries; "
          f"best of {args.repeat} x {args.rounds} passes, µs per row")
    print("| decoder | view decode µs | × hand | summary decode µs | × hand |")
    print("|---|---:|---:|---:|---:|")
    base: tuple[float, float] | None = None
    for label, view_decoder, summary_decoder in decoders:
        v = best(view_decoder, bodies, args.rounds, args.repeat)
        s = best(summary_decoder, summaries, args.rounds, args.repeat)
        base = base or (v, s)
        print(f"| {label} | {v:.1f} | {v / base[0]:.2f} | {s:.1f} | {s / base[1]:.2f} |")

    print("| encoder | view encode µs | × orjson | summary encode µs | × orjson | same bytes |")
    print("|---|---:|---:|---:|---:|---|")
    v = best(codec.encode, views, args.rounds, args.repeat)
    s = best(codec.encode, sums, args.rounds, args.repeat)
    print(f"| orjson, sorted keys (codec.encode) | {v:.1f} | 1.00 | {s:.1f} | 1.00 | yes |")
    if msgspec is not None:
        encoder = msgspec.json.Encoder(order="deterministic")  # field order, sorted dict keys: what orjson writes
        same = all(encoder.encode(view) == body for view, body in zip(views, bodies))
        mv = best(encoder.encode, views, args.rounds, args.repeat)
        ms = best(encoder.encode, sums, args.rounds, args.repeat)
        print(f"| msgspec, order=deterministic | {mv:.1f} | {mv / v:.2f} | {ms:.1f} | {ms / s:.2f} | {'yes' if same else 'no'} |")


if __name__ == "__main__":
    main()
