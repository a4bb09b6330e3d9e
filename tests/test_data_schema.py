"""The JSON under data/ follows the published schema, agenthropic_site/render/site_data.schema.json."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agenthropic_site.corpus import SKIP_REASONS
from agenthropic_site.parse.model import AGENT_KINDS, EDGE_SOURCES, OUTCOME_CAUSES, STATUSES, TOKEN_CATEGORIES
from agenthropic_site.render.redact import KINDS
from conftest import DEMO_CORPUS, REPO, build

PACKAGE = REPO / "agenthropic_site"
SCHEMA_PATH = PACKAGE / "render" / "site_data.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
DEMO_DATA = REPO / "site" / "data"
KINDS_OF_DOCUMENT = {"index", "session", "usage"}


def kind_of(rel: str) -> str:
    """Name the $defs entry of a file under data/ by its path; an unknown file fails the test."""
    if rel == "index.json":
        return "index"
    if rel == "usage.json":
        return "usage"
    if re.fullmatch(r"sessions/[^/]+\.json", rel):
        return "session"
    raise AssertionError(f"data/{rel} is a JSON file the schema has no kind for: add a $defs entry")


def validator(kind: str | None = None) -> Draft202012Validator:
    """Return a validator of the whole schema, or of one document kind."""
    if kind is None:
        return Draft202012Validator(SCHEMA)
    return Draft202012Validator({"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{kind}"})


def validate_tree(data: Path) -> dict[str, int]:
    """Validate every JSON file below a data/ folder against its kind and the whole schema; count files by kind."""
    whole = validator()
    seen: dict[str, int] = {}
    for path in sorted(data.rglob("*.json")):
        rel = path.relative_to(data).as_posix()
        kind = kind_of(rel)
        document = json.loads(path.read_bytes())
        problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(kind).iter_errors(document)]
        assert not problems, f"data/{rel}:\n" + "\n".join(problems[:20])
        assert whole.is_valid(document), f"data/{rel} is valid as {kind} but not against the whole schema (oneOf)"
        seen[kind] = seen.get(kind, 0) + 1
    return seen


def demo_document(rel: str) -> dict[str, Any]:
    """Load one document of the committed demo site."""
    return json.loads((DEMO_DATA / rel).read_bytes())


def demo_session(excluded: bool) -> dict[str, Any]:
    """Return a committed demo session document, priced or excluded, that has agents."""
    for path in sorted((DEMO_DATA / "sessions").glob("*.json")):
        document = json.loads(path.read_bytes())
        if (document["excluded"] is not None) == excluded and document["agents"]:
            return document
    raise AssertionError(f"the demo site has no {'excluded' if excluded else 'priced'} session with agents")


def enum_of(name: str) -> list[Any]:
    """Return the values of an enum of the schema's $defs."""
    return SCHEMA["$defs"][name]["enum"]


def test_schema_is_valid_draft_2020_12() -> None:
    """The schema is itself a valid draft 2020-12 schema, with a $defs entry per document kind."""
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)
    assert KINDS_OF_DOCUMENT <= set(SCHEMA["$defs"])


def test_committed_demo_site_validates() -> None:
    """Every JSON file of the committed demo site validates, and both document kinds are among them."""
    seen = validate_tree(DEMO_DATA)
    assert sum(seen.values()) > 0
    assert set(seen) == KINDS_OF_DOCUMENT
    assert seen["index"] == seen["usage"] == 1
    assert seen["session"] == demo_document("index.json")["report"]["sessions"]


@pytest.mark.parametrize(
    "extra", [(), ("--redact",), ("--watchdog-minutes", "100000000"), ("--tz", "Asia/Kolkata")], ids=["plain", "redact", "no-watchdog", "tz"],
)
def test_fresh_demo_build_validates(tmp_path: Path, extra: tuple[str, ...]) -> None:
    """A fresh build of the demo corpus, with or without options, writes only JSON the schema accepts."""
    code = build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache", *extra)
    assert code in (0, 1), code
    seen = validate_tree(tmp_path / "site" / "data")
    assert set(seen) == KINDS_OF_DOCUMENT
    redactions = json.loads((tmp_path / "site" / "data" / "index.json").read_bytes())["report"]["redactions"]
    assert (redactions is not None) == ("--redact" in extra)


def drop(key: str) -> Callable[[dict[str, Any]], None]:
    """Return a change that removes a top-level key."""
    return lambda document: document.pop(key)


def set_to(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Return a change that sets a dotted path (list indexes as numbers) to a value."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
        target: Any = document
        for part in parents:
            target = target[part]
        target[last] = value

    return change


BAD_SESSIONS = {
    "missing tokens": (False, drop("tokens")),
    "missing agents": (False, drop("agents")),
    "cost as a number": (False, set_to("cost_usd", 0.25)),
    "cost without 10 places": (False, set_to("cost_usd", "0.25")),
    "priced session with null cost": (False, set_to("cost_usd", None)),
    "unknown status": (False, set_to("status", "running")),
    "unknown key": (False, set_to("surprise", 1)),
    "negative tokens": (False, set_to("tokens.output", -1)),
    "tokens as a string": (False, set_to("tokens.input", "12")),
    "unknown agent kind": (False, set_to("agents.0.kind", "robot")),
    "unknown edge source": (False, set_to("agents.0.edge_source", "hearsay")),
    "agent without transcript and no report": (False, set_to("agents.0.transcript", False)),
    "bad session id": (False, set_to("session_id", "../../etc/passwd")),
    "excluded session with a cost": (True, set_to("cost_usd", "0.0000000000")),
    "excluded session with category costs": (True, set_to("cost_by_category", {name: "0.0000000000" for name in TOKEN_CATEGORIES})),
    "excluded agent with a cost": (True, set_to("agents.0.cost_usd", "0.0000000000")),
}


@pytest.mark.parametrize("name", list(BAD_SESSIONS))
def test_schema_rejects_broken_session(name: str) -> None:
    """A session document with a key removed, a wrong type or a value outside its set is rejected."""
    excluded, change = BAD_SESSIONS[name]
    document = demo_session(excluded)
    assert validator("session").is_valid(document)
    broken = copy.deepcopy(document)
    change(broken)
    assert not validator("session").is_valid(broken)
    assert not validator().is_valid(broken)


BAD_INDEXES = {
    "missing report": drop("report"),
    "missing totals": drop("totals"),
    "session summary with a numeric cost": set_to("sessions.0.cost_usd", 1),
    "unknown skip reason": set_to("report.skipped.0.reason", "boring"),
    "unknown redaction kind": set_to("report.redactions", {"password": 1}),
    "bad day key": set_to("cost_by_day", {"yesterday": "0.0000000000"}),
    "project total cost null": set_to("projects.0.cost_usd", None),
}


@pytest.mark.parametrize("name", list(BAD_INDEXES))
def test_schema_rejects_broken_index(name: str) -> None:
    """An index document with a key removed, a wrong type or a value outside its set is rejected."""
    document = demo_document("index.json")
    broken = copy.deepcopy(document)
    BAD_INDEXES[name](broken)
    assert not validator("index").is_valid(broken)
    assert not validator().is_valid(broken)


def test_a_session_is_not_an_index() -> None:
    """Each document kind is rejected as the other kind."""
    assert not validator("index").is_valid(demo_session(False))
    assert not validator("session").is_valid(demo_document("index.json"))
    usage = demo_document("usage.json")
    assert validator("usage").is_valid(usage)
    for other in ("index", "session"):
        assert not validator(other).is_valid(usage)
    assert not validator("usage").is_valid(demo_document("index.json"))


BAD_USAGE = {
    "missing tz": drop("tz"),
    "missing blocks": drop("blocks"),
    "unknown key": set_to("surprise", 1),
    "start without an offset": set_to("blocks.0.start", "2025-10-08T09:00:00"),
    "start in UTC milliseconds": set_to("days.0.start", "2025-10-08T00:00:00.000Z"),
    "cost as a number": set_to("days.0.cost_usd", 0.25),
    "cost_complete as text": set_to("months.0.cost_complete", "yes"),
    "sessions negative": set_to("weeks.0.sessions", -1),
    "models not a list": set_to("blocks.0.models", "claude-opus-4-5"),
    "window without tokens": lambda document: document["blocks"][0].pop("tokens"),
    "untimed without tokens": lambda document: document["untimed"].pop("tokens"),
}


@pytest.mark.parametrize("name", list(BAD_USAGE))
def test_schema_rejects_broken_usage(name: str) -> None:
    """A usage document with a key removed, a wrong type or a time without its offset is rejected."""
    document = demo_document("usage.json")
    assert validator("usage").is_valid(document)
    broken = copy.deepcopy(document)
    BAD_USAGE[name](broken)
    assert not validator("usage").is_valid(broken)
    assert not validator().is_valid(broken)


def test_enums_match_the_code() -> None:
    """The schema's closed sets are the code's: statuses, agent kinds, edge sources, outcomes, skips, redaction kinds, token categories."""
    assert enum_of("status") == list(STATUSES)
    assert enum_of("agentKind") == list(AGENT_KINDS)
    assert enum_of("edgeSource") == list(EDGE_SOURCES)
    assert enum_of("outcomeCause") == list(OUTCOME_CAUSES)
    assert enum_of("skipReason") == list(SKIP_REASONS)
    assert enum_of("redactionKind") == list(KINDS)
    assert list(SCHEMA["$defs"]["tokens"]["properties"]) == list(TOKEN_CATEGORIES)
    assert list(SCHEMA["$defs"]["costByCategory"]["properties"]) == list(TOKEN_CATEGORIES)


def test_warning_codes_cover_the_code() -> None:
    """Every warning code the package writes is in the schema's warningCode enum."""
    source = "\n".join(path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py")))
    codes = set(re.findall(r'\bWarning\(\s*"([a-z_]+)"', source)) | set(re.findall(r'\{"code": "([a-z_]+)"', source))
    assert "unlinked_agent" in codes and "graph_check" in codes
    assert codes <= set(enum_of("warningCode")), sorted(codes - set(enum_of("warningCode")))
