"""Compare agenthropic's per-session costs with ccusage's, and explain every difference by rule.

Usage: python bench/compare_ccusage.py [--corpus DIR ...] [--ccusage-version V] [--markdown] [--json FILE]

Default corpora: the demo corpus `fixtures/corpus` and, when AGENTHROPIC_SHARED_DIR is set,
every folder of `$AGENTHROPIC_SHARED_DIR/corpora`.

For each corpus the script
1. installs ccusage with npm into bench/.work/ccusage/ if it is not there (and prints its version);
2. copies the corpus into a temporary folder as <tmp>/projects/ (a real copy: both tools read the
   same bytes, and our walker never follows symbolic links);
3. runs `ccusage claude session --json --offline --mode calculate` with CLAUDE_CONFIG_DIR=<tmp>
   and `agenthropic build` on <tmp>/projects;
4. measures the rate ccusage charges for every model id of the corpus with a probe corpus (one
   request per model, field and size), so no ccusage price is guessed;
5. re-derives, from the JSONL with the standard library only, which requests each tool counts and
   in which session, under each tool's rules (ccusage's were measured on 20.0.24 with small
   synthetic corpora, see docs/cost.md); checks that this reproduces both tools' per-session
   figures; and splits every per-session difference into the rules that cause it, in dollars and
   in tokens;
6. compares the global token totals of both tools, category by category;
7. compares the 5-hour blocks of `ccusage claude blocks --json` with our data/usage.json (built in
   UTC): boundaries and tokens, explaining each boundary difference by rule (the requests each tool
   counts, or the instant a block ends, measured with a probe corpus).

Exit code: 0 when every difference, per session and in the global token totals, is explained
by a rule below; 1 when the re-derivation does not reproduce a tool's figures or a difference
is left unexplained (or falls under "other").

The script only reads the corpus; everything it writes goes to a temporary folder (or, for the
npm install, to bench/.work/). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
CCUSAGE_PREFIX = WORK / "ccusage"
DEMO_CORPUS = REPO / "fixtures" / "corpus"
PRICING_JSON = REPO / "agenthropic_site" / "cost" / "pricing.json"
NOW = "2026-06-01T00:00:00Z"
HALF_CENT = Decimal("0.005")
NOISE = Decimal("1e-9")  # ccusage sums binary floats; below this a difference is rounding
PER_MILLION = Decimal(1_000_000)
SYNTHETIC = "<synthetic>"
CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")

# Rules: the reason each request can be counted, attributed or priced differently. Order = report order.
RULES = {
    "flat-agent-file": (
        "flat agent-<id>.jsonl file: ccusage reports it as its own session 'agent-<id>'; we add "
        "it to the session named inside it"
    ),
    "workflow-folder": (
        "subagents/workflows/<run>/ file: ccusage reports it as session '<run>'; we add it to its "
        "session"
    ),
    "orphan-agent-file": (
        "flat agent-<id>.jsonl file of a session whose main transcript is 0 bytes or absent: "
        "ccusage reports it as its own session 'agent-<id>'; we build the session named inside it "
        "from its agent files"
    ),
    "replay-ownership": (
        "request replayed in another session (resume/fork copy): ccusage counts it in the first "
        "file by path; we in the session that owns it"
    ),
    "request-id-copy": (
        "request copied into another session under a replaced message.id (same requestId): "
        "ccusage keys on message.id + requestId and counts every copy; we count the request once, "
        "in the session that owns it"
    ),
    "duplicate-session": (
        "same session id with a main transcript in two project folders: ccusage reports both; we "
        "keep the first folder only"
    ),
    "skipped-file": (
        "file we do not read as a transcript (see report.skipped): ccusage counts its usage lines"
    ),
    "halt-gate": (
        "session we leave unpriced (unknown model / fast mode without a price): ccusage prices "
        "it, $0 for unknown models (both count its tokens)"
    ),
    "long-context-tier": (
        "request past 200k tokens: ccusage charges the higher rate only on the tokens beyond "
        "200,000 within each field (a few ids: the whole request); we charge the whole request at "
        "the long-context rates when its context passes the threshold"
    ),
    "fast-multiplier": "fast-mode request priced with a different multiplier",
    "provider-rate": (
        "provider-prefixed model id (e.g. us.anthropic.*): ccusage uses that provider's listed "
        "rate; we the family's"
    ),
    "rate-table": "ccusage's bundled rate for this model id differs from our table",
    "dedupe-line-choice": (
        "same request written on several lines: ccusage keeps the line with most tokens in total "
        "(ties: first), we the one with most output tokens (ties: last)"
    ),
    "sidechain-replay": (
        "compaction/side-question file replays a parent message under a new requestId: ccusage "
        "merges a sidechain copy only when its timestamp equals the parent's, so it counts both; "
        "we count each message.id once per session (main transcript first)"
    ),
    "id-replay-new-request": (
        "same message.id under another requestId, neither copy a sidechain: ccusage counts both; "
        "we count a message.id once across the files of a session and once across sessions"
    ),
    "glued-records": (
        "two records glued on one line ({...}{...}, an append after an unterminated line): "
        "ccusage skips the line as invalid JSON; we read both"
    ),
    "non-assistant-usage": "usage on a line that is not an assistant record: ccusage counts it; we do not",
    "synthetic-usage": "<synthetic> line with usage: ccusage adds its tokens (at $0); we skip the line",
    "malformed-usage": "usage we reject as malformed (ccusage accepts it)",
    "ccusage-skipped-line": (
        "line ccusage skips (a null in one of its fields, no timestamp, a version that is not "
        "x.y.z): we count it"
    ),
    "other": "not classified",
}


# ---------------------------------------------------------------------------------------------
# small helpers


def dec(value: float | int | str) -> Decimal:
    """Decimal of a JSON number without binary noise (repr round-trips a float)."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def usd(value: Decimal | None, places: int = 4) -> str:
    # "+ 0" turns a negative zero (a float sum of ccusage's) into 0.
    return "—" if value is None else f"{value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP) + 0:.{places}f}"


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """Split on b"\\n" only; return the complete lines and the unterminated tail."""
    pieces = data.split(b"\n")
    return pieces[:-1], pieces[-1]


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# ccusage: install, version, command


def _native_package() -> str | None:
    """The platform package ccusage's launcher needs (same mapping as its cli.js)."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    return f"@ccusage/ccusage-{system}-{arch}" if system and arch else None


def _installed_version() -> str | None:
    package = CCUSAGE_PREFIX / "node_modules" / "ccusage" / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ccusage_bin() -> Path:
    return CCUSAGE_PREFIX / "node_modules" / ".bin" / "ccusage"


def _npm_install(spec: str) -> None:
    print(f"$ npm install --prefix {CCUSAGE_PREFIX.relative_to(REPO)} {spec}")
    done = run(["npm", "install", "--prefix", str(CCUSAGE_PREFIX), spec])
    if done.returncode != 0:
        sys.exit(f"npm install failed:\n{done.stdout}{done.stderr}")
    print(f"  installed ccusage {_installed_version()}")


def _semver_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.-]", version))


def ensure_ccusage(pinned: str | None) -> str:
    """Install ccusage if needed; return the version that runs."""
    WORK.mkdir(parents=True, exist_ok=True)
    have = _installed_version()
    if have is None or (pinned and have != pinned):
        _npm_install(f"ccusage@{pinned}" if pinned else "ccusage")
    probe = run([str(ccusage_bin()), "--version"])
    if probe.returncode != 0:
        # The npm package is a launcher; the program is an optional platform package. A release
        # whose platform package is not in the registry installs without it and cannot run.
        package = _native_package()
        print(f"  ccusage {_installed_version()} does not run here: {(probe.stderr or probe.stdout).strip()}")
        if package is None:
            sys.exit("no ccusage platform package for this machine")
        listed = run(["npm", "view", package, "versions", "--json"])
        versions = json.loads(listed.stdout or "[]")
        versions = [versions] if isinstance(versions, str) else versions
        if not versions:
            sys.exit(f"{package} is not in the registry")
        newest = max(versions, key=_semver_key)
        print(f"  the newest {package} in the registry is {newest}: installing ccusage@{newest}")
        _npm_install(f"ccusage@{newest}")
        probe = run([str(ccusage_bin()), "--version"])
        if probe.returncode != 0:
            sys.exit(f"ccusage still does not run: {probe.stderr.strip()}")
    return probe.stdout.strip().split()[-1]


def session_command() -> list[str]:
    """`claude session` in ccusage 20.x; plain `session` in older releases."""
    for command in (["claude", "session"], ["session"]):
        shown = run([str(ccusage_bin()), *command, "--help"])
        if shown.returncode == 0 and "--offline" in shown.stdout and "--mode" in shown.stdout:
            if command != ["claude", "session"]:
                print(f"  note: this ccusage has no `claude session`; using `{' '.join(command)}`")
            return [*command, "--json", "--offline", "--mode", "calculate"]
    sys.exit("ccusage has neither `claude session` nor `session` with --offline and --mode")


def run_ccusage(config_dir: Path, command: list[str]) -> dict[str, Any]:
    home = config_dir / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "HOME": str(home),  # nothing from the real ~/.claude, and any cache stays in the temp folder
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TZ": "UTC",
        "NO_COLOR": "1",
    }
    done = run([str(ccusage_bin()), *command], env=env)
    if done.returncode != 0:
        sys.exit(f"ccusage failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout) if done.stdout.strip() else {"sessions": [], "totals": {}}


# ---------------------------------------------------------------------------------------------
# ccusage's rules, measured on 20.0.24 (docs/cost.md, "Compared with ccusage")

# A line is read only if it contains this exact byte string (compact JSON, as Claude Code writes).
CC_USAGE_MARKER = b'"usage":{'
# A line in which any of these keys is literally null is skipped whole, wherever the key is.
CC_NULL_RE = re.compile(
    rb'"(?:id|cwd|model|speed|costUSD|version|sessionId|requestId|isApiErrorMessage|cache_read_input_tokens|cache_creation_input_tokens)":null'
)
CC_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})$")
CC_VERSION_RE = re.compile(r"^\d+\.\d+\.\d")


@dataclass
class CcEntry:
    """One usage line as ccusage reads it."""

    file: str
    line: int
    session: tuple[str, str]  # (projectPath, sessionId) as ccusage reports them
    message_id: str | None
    request_id: str | None
    sidechain: bool
    timestamp: str
    model: str | None
    speed: str | None
    tokens: dict[str, int]  # input, output, cache_read, cache_write_5m, cache_write_1h
    cost: Decimal = Decimal(0)

    @property
    def total(self) -> int:
        return sum(self.tokens.values())


def cc_session_key(rel: str) -> tuple[str, str]:
    """ccusage's (projectPath, sessionId) for a file below projects/ (measured, see docs/cost.md)."""
    parts = rel.split("/")
    if len(parts) == 2 and parts[1].endswith(".jsonl") and len(parts[1]) > len(".jsonl"):
        return parts[0], parts[1][: -len(".jsonl")]
    if len(parts) >= 4 and parts[-2] == "subagents":
        return "/".join(parts[:-3]) or "Unknown Project", parts[-3]
    return ("/".join(parts[:-2]) if len(parts) > 2 else "Unknown Project"), parts[max(len(parts) - 2, 0)]


def cc_read_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Return (fields, None) for a line ccusage counts, (None, why) for a usage line it skips."""
    if CC_USAGE_MARKER not in raw:
        return None, None
    if CC_NULL_RE.search(raw):
        return None, "null-field"
    try:
        record = json.loads(raw)
    except ValueError:
        return None, "invalid-json"
    if not isinstance(record, dict):
        return None, "invalid-json"
    timestamp = record.get("timestamp")
    if not isinstance(timestamp, str) or not CC_TIMESTAMP_RE.match(timestamp):
        return None, "no-timestamp"
    message = record.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict) or not is_count(usage.get("input_tokens")) or not is_count(usage.get("output_tokens")):
        return None, "bad-usage"
    write = usage.get("cache_creation_input_tokens", 0)
    read = usage.get("cache_read_input_tokens", 0)
    if not is_count(write) or not is_count(read):
        return None, "bad-usage"
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        five, hour = split.get("ephemeral_5m_input_tokens", 0), split.get("ephemeral_1h_input_tokens", 0)
        if not is_count(five) or not is_count(hour):
            return None, "bad-usage"
    elif split is None:
        five, hour = write, 0
    else:
        return None, "bad-usage"
    speed = usage.get("speed")
    if speed not in (None, "standard", "fast"):
        return None, "bad-usage"
    version = record.get("version")
    if version is not None and not (isinstance(version, str) and CC_VERSION_RE.match(version)):
        return None, "version"
    for value in (record.get("sessionId"), record.get("requestId"), message.get("id"), message.get("model")):
        if value is not None and not (isinstance(value, str) and value):
            return None, "bad-field"
    sidechain = record.get("isSidechain")
    if sidechain is not None and not isinstance(sidechain, bool):
        return None, "bad-field"
    return {
        "message_id": message.get("id"),
        "request_id": record.get("requestId"),
        "sidechain": sidechain is True,
        "timestamp": timestamp,
        "model": message.get("model"),
        "speed": speed,
        "tokens": {"input": usage["input_tokens"], "output": usage["output_tokens"], "cache_read": read,
                   "cache_write_5m": five, "cache_write_1h": hour},
    }, None


def cc_files(root: Path) -> list[str]:
    """Every *.jsonl below projects/, in path order (ccusage's order for ties)."""
    found = []
    for base, _dirs, names in os.walk(root):
        for name in names:
            if name.endswith(".jsonl"):
                found.append(os.path.relpath(os.path.join(base, name), root).replace(os.sep, "/"))
    return sorted(found)


def cc_read_corpus(root: Path) -> tuple[list[CcEntry], dict[tuple[str, int], str]]:
    """All usage lines ccusage reads, before dedupe, and the usage lines it skips (with why)."""
    entries: list[CcEntry] = []
    skipped: dict[tuple[str, int], str] = {}
    for rel in cc_files(root):
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        lines, tail = split_lines(data)
        if tail.strip():
            lines.append(tail)  # ccusage reads an unterminated last line too
        for number, raw in enumerate(lines, start=1):
            fields, why = cc_read_line(raw)
            if why is not None:
                skipped[(rel, number)] = why
            if fields is None:
                continue
            entries.append(CcEntry(file=rel, line=number, session=cc_session_key(rel), **fields))
    return entries, skipped


def cc_dedupe(entries: list[CcEntry]) -> tuple[list[CcEntry], list[tuple[CcEntry, CcEntry]]]:
    """ccusage's global dedupe; returns the kept entries and (dropped, kept-instead) pairs.

    Key (message.id, requestId); failing that, (message.id, timestamp) when either copy is a
    sidechain (20.0.24 merges a sidechain replay only if its timestamp is the parent's too).
    The copy kept is the non-sidechain one, then the one with more tokens in total, then the
    costlier, then the one carrying usage.speed; else the first read. No message.id: never merged.
    """
    kept: list[CcEntry] = []
    exact: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    by_id: dict[tuple[str, str], list[int]] = defaultdict(list)
    dropped: list[tuple[CcEntry, CcEntry]] = []
    for entry in entries:
        mid = entry.message_id
        if mid is None:
            kept.append(entry)
            continue
        index = next((i for i in exact[(mid, entry.request_id)] if kept[i].message_id == mid and kept[i].request_id == entry.request_id), None)
        if index is None:
            index = next((i for i in by_id[(mid, entry.timestamp)] if kept[i].message_id == mid and kept[i].timestamp == entry.timestamp
                          and (entry.sidechain or kept[i].sidechain)), None)
        if index is None:
            exact[(mid, entry.request_id)].append(len(kept))
            by_id[(mid, entry.timestamp)].append(len(kept))
            kept.append(entry)
            continue
        old = kept[index]
        if _cc_replaces(entry, old):
            kept[index] = entry
            dropped.append((old, entry))
            for table, key in ((exact, (mid, entry.request_id)), (by_id, (mid, entry.timestamp))):
                if index not in table[key]:
                    table[key].append(index)
        else:
            dropped.append((entry, old))
    return kept, dropped


def _cc_replaces(new: CcEntry, old: CcEntry) -> bool:
    if new.sidechain != old.sidechain:
        return old.sidechain
    if new.total != old.total:
        return new.total > old.total
    if new.cost != old.cost:
        return new.cost > old.cost
    return new.speed is not None and old.speed is None


# ---------------------------------------------------------------------------------------------
# ccusage's rates: measured by running it on a probe corpus


@dataclass(frozen=True)
class CcRates:
    """What ccusage charges per token for one model id."""

    base: dict[str, Decimal]
    above: dict[str, Decimal | None]  # rate beyond 200,000 tokens, per field; None: no tier
    context_rule: bool  # whole request at `above` when the context exceeds 200,000 (not per field)
    fast: Decimal

    def cost(self, tokens: dict[str, int], speed: str | None) -> Decimal:
        if self.context_rule and tokens["input"] + tokens["cache_read"] + tokens["cache_write_5m"] + tokens["cache_write_1h"] > 200_000:
            total = sum((Decimal(tokens[f]) * (self.above[f] or self.base[f]) for f in CATEGORIES), Decimal(0))
        else:
            total = sum((_tiered(tokens[f], self.base[f], None if self.context_rule else self.above[f]) for f in CATEGORIES), Decimal(0))
        return total * (self.fast if speed == "fast" else 1)

    def per_field_tier(self, tokens: dict[str, int]) -> bool:
        return not self.context_rule and any(self.above[f] is not None and tokens[f] > 200_000 for f in CATEGORIES)


def _tiered(tokens: int, base: Decimal, above: Decimal | None) -> Decimal:
    if above is not None and tokens > 200_000:
        return 200_000 * base + (tokens - 200_000) * above
    return tokens * base


def _probe_usage(field_name: str, amount: int) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0,
                             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}
    if field_name == "input":
        usage["input_tokens"] = amount
    elif field_name == "output":
        usage["output_tokens"] = amount
    elif field_name == "cache_read":
        usage["cache_read_input_tokens"] = amount
    else:
        usage["cache_creation_input_tokens"] = amount
        usage["cache_creation"]["ephemeral_5m_input_tokens" if field_name == "cache_write_5m" else "ephemeral_1h_input_tokens"] = amount
    return usage


def _round_rate(value: Decimal) -> Decimal:
    return Decimal(format(value, ".12g")) if value else Decimal(0)


def probe_ccusage_rates(models: Iterable[str], command: list[str], workdir: Path) -> dict[str, CcRates]:
    """Run ccusage once on a probe corpus holding one request per (model, field, size)."""
    models = sorted(set(models))
    if not models:
        return {}
    projects = workdir / "probe" / "projects" / "-probe"
    projects.mkdir(parents=True)
    probes: dict[str, tuple[str, str]] = {}
    sizes = {"base": 100_000, "tier": 1_000_000}
    for number, model in enumerate(models):
        plan: list[tuple[str, dict[str, Any]]] = []
        for name in CATEGORIES:
            for size_name, amount in sizes.items():
                plan.append((f"{name}:{size_name}", _probe_usage(name, amount)))
        context = _probe_usage("input", 150_000)
        context["cache_read_input_tokens"] = 100_000
        plan.append(("context", context))
        # For a whole-request tier: 300,000 cache reads alone, and with 100,000 more of each field.
        plan.append(("ctx", _probe_usage("cache_read", 300_000)))
        for name in ("input", "output", "cache_write_5m", "cache_write_1h"):
            usage = _probe_usage(name, 100_000)
            usage["cache_read_input_tokens"] = 300_000
            plan.append((f"ctx+{name}", usage))
        fast = _probe_usage("input", 100_000)
        fast["speed"] = "fast"
        plan.append(("fast", fast))
        for index, (what, usage) in enumerate(plan):
            session = f"p{number}-{index}"
            probes[session] = (model, what)
            record = {"type": "assistant", "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": session, "version": "2.1.0",
                      "requestId": f"req_{session}", "isSidechain": False, "uuid": session,
                      "message": {"id": f"msg_{session}", "model": model, "role": "assistant", "usage": usage}}
            (projects / f"{session}.jsonl").write_text(json.dumps(record, separators=(",", ":")) + "\n")
    report = run_ccusage(workdir / "probe", command)
    measured: dict[tuple[str, str], Decimal] = {}
    for row in report.get("sessions", []):
        if row["sessionId"] in probes:
            measured[probes[row["sessionId"]]] = dec(row["totalCost"])
    rates = {}
    for model in models:
        cost = lambda what, model=model: measured.get((model, what), Decimal(0))  # noqa: E731 - a row with no cost is not listed
        base = {name: _round_rate(cost(f"{name}:base") / sizes["base"]) for name in CATEGORIES}
        above: dict[str, Decimal | None] = {}
        for name in CATEGORIES:
            flat = base[name] * sizes["tier"]
            got = cost(f"{name}:tier")
            above[name] = None if abs(got - flat) < NOISE else _round_rate((got - 200_000 * base[name]) / (sizes["tier"] - 200_000))
        per_field = 150_000 * base["input"] + 100_000 * base["cache_read"]
        context_rule = abs(cost("context") - per_field) >= NOISE
        if context_rule:
            # The whole request at the tier rates once its context passes 200,000 tokens.
            above = {name: _round_rate((cost(f"ctx+{name}") - cost("ctx")) / 100_000) for name in CATEGORIES if name != "cache_read"}
            above["cache_read"] = _round_rate(cost("ctx") / 300_000)
        fast = _round_rate(cost("fast") / (base["input"] * sizes["base"])) if base["input"] else Decimal(1)
        rates[model] = CcRates(base, above, context_rule, fast)
    return rates


# ---------------------------------------------------------------------------------------------
# agenthropic's rules (parse/usage.py, parse/session.py, gather.py, cost/prices.py)

OUR_PREFIX_RE = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?anthropic[./]")
OUR_SUFFIX_RES = (re.compile(r"\[1m\]$"), re.compile(r"@.*$"), re.compile(r"-v\d+(?::\d+)?$"), re.compile(r"-\d{8}$"))
SESSION_ID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
INLINE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
REPLAYING_KINDS = {"compaction", "side_question", "prompt_suggestion"}


def normalise_model(model: str) -> str:
    name = OUR_PREFIX_RE.sub("", model.strip().lower())
    for pattern in OUR_SUFFIX_RES:
        name = pattern.sub("", name)
    return name


@dataclass(frozen=True)
class OurPeriod:
    start: str
    rates: dict[str, Decimal]
    threshold: int | None
    long_context: dict[str, Decimal] | None
    fast: Decimal | None


class OurPrices:
    """The built-in table (agenthropic_site/cost/pricing.json), priced as cost/prices.py does."""

    def __init__(self, path: Path) -> None:
        document = json.loads(path.read_text())
        self.family_of: dict[str, str] = {}
        self.periods: dict[str, list[OurPeriod]] = {}
        for name, entry in sorted(document["families"].items()):
            periods = []
            for item in sorted(entry["periods"], key=lambda p: str(p["from"])):
                tier = item.get("long_context")
                periods.append(OurPeriod(
                    start=str(item["from"])[:10],
                    rates={c: Decimal(str(item[c])) for c in CATEGORIES},
                    threshold=int(tier["threshold"]) if tier else None,
                    long_context={c: Decimal(str(tier[c])) for c in CATEGORIES} if tier else None,
                    fast=Decimal(str(item["fast_multiplier"])) if item.get("fast_multiplier") is not None else None,
                ))
            self.periods[name] = periods
            for model in entry["models"]:
                self.family_of[normalise_model(str(model))] = name

    def period(self, model: str, day: str | None) -> OurPeriod | str:
        family = self.family_of.get(normalise_model(model))
        if family is None:
            return f"no price for model {model}"
        periods = self.periods[family]
        if day is None:
            return periods[0] if len(periods) == 1 else f"no timestamp to choose a dated price for model {model}"
        chosen = None
        for candidate in periods:
            if candidate.start <= day[:10]:
                chosen = candidate
        return chosen if chosen is not None else f"no price in force on {day[:10]} for model {model}"

    def cost(self, model: str, tokens: dict[str, int], day: str | None, speed: str | None) -> Decimal | str:
        """The request's cost, or the reason it cannot be priced (the halt gate)."""
        if model == SYNTHETIC:
            return Decimal(0)
        period = self.period(model, day)
        if isinstance(period, str):
            return period
        rates = period.rates
        if period.long_context is not None and period.threshold is not None and self.context(tokens) > period.threshold:
            rates = period.long_context
        multiplier = Decimal(1)
        if speed == "fast":
            if period.fast is None:
                return f"no fast-mode price for model {model}"
            multiplier = period.fast
        return sum((Decimal(tokens[c]) * rates[c] * multiplier / PER_MILLION for c in CATEGORIES), Decimal(0))

    @staticmethod
    def context(tokens: dict[str, int]) -> int:
        return tokens["input"] + tokens["cache_read"] + tokens["cache_write_5m"] + tokens["cache_write_1h"]

    def tier_applies(self, model: str, tokens: dict[str, int], day: str | None) -> bool:
        period = self.period(model, day)
        return not isinstance(period, str) and period.threshold is not None and self.context(tokens) > period.threshold


@dataclass
class OurRow:
    """One request as agenthropic keeps it after deduplication inside its session."""

    session: str
    file: str
    line: int
    message_id: str | None
    request_id: str | None
    model: str
    tokens: dict[str, int]
    at: str | None
    speed: str | None
    origin: str | None
    cost: Decimal | str = Decimal(0)
    owned: bool = False  # the session owns the request: its tokens count (even when unpriced)
    counted: bool = False  # ... and it is priced: its cost counts


def instant_of(value: Any) -> str | None:
    """Timestamp as our parser keeps it (only its UTC day matters to pricing)."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    if re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z", value):
        return value
    from datetime import datetime

    try:
        parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def our_read_tokens(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict) or not is_count(usage.get("input_tokens")) or not is_count(usage.get("output_tokens")):
        return None
    optional = {}
    for name in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        raw = usage.get(name)
        if raw is not None and not is_count(raw):
            return None
        optional[name] = raw or 0
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        five, hour = split.get("ephemeral_5m_input_tokens", 0), split.get("ephemeral_1h_input_tokens", 0)
        if not is_count(five) or not is_count(hour):
            return None
    else:
        five, hour = optional["cache_creation_input_tokens"], 0
    return {"input": usage["input_tokens"], "output": usage["output_tokens"], "cache_read": optional["cache_read_input_tokens"],
            "cache_write_5m": five, "cache_write_1h": hour}


# parse/lines.py: past this many `}{` seams tried, a glued line stays an error.
OUR_MAX_SEAM_TRIES = 64


def our_decode_line(raw: bytes) -> list[Any] | None:
    """parse/lines.py decode_line: the line's JSON values (several when records were glued), or None."""
    try:
        return [json.loads(raw)]
    except ValueError:
        pass
    # An append right after an unterminated complete line glues two records: `{...}{...}`.
    objects: list[Any] = []
    start = 0
    seam = raw.find(b"}{")
    for _ in range(OUR_MAX_SEAM_TRIES):
        if seam < 0:
            break
        try:
            value = json.loads(raw[start : seam + 1])
        except ValueError:
            seam = raw.find(b"}{", seam + 1)
            continue
        objects.append(value)
        start = seam + 1
        seam = raw.find(b"}{", start)
    if not objects:
        return None
    try:
        value = json.loads(raw[start:])
    except ValueError:
        return None
    return objects + [value] if isinstance(value, dict) else None


def our_decode_file(data: bytes) -> tuple[list[tuple[int, dict[str, Any]]], dict[int, str]]:
    """parse/lines.py decode_jsonl: the records (line number, object) and why other lines give none.

    Split on b"\\n" only. The piece after the last newline is a record when it decodes (issue 13:
    finished transcripts often lack the final newline); only one that does not is pending.
    """
    pieces = data.split(b"\n")
    records: list[tuple[int, dict[str, Any]]] = []
    status: dict[int, str] = {}
    for number, raw in enumerate(pieces, start=1):
        if not raw.strip():
            continue
        values = our_decode_line(raw)
        if values is None:
            status[number] = "pending" if number == len(pieces) else "invalid-json"
            continue
        if len(values) > 1:
            status[number] = "glued"
        for value in values:
            if isinstance(value, dict):
                records.append((number, value))
            else:
                status[number] = "invalid-json"
    return records, status


def our_record_status(record: dict[str, Any], session: str) -> tuple[str, dict[str, Any] | None]:
    """Why our parser counts a record or not: ('candidate', fields) or (reason, None)."""
    if record.get("type") != "assistant":
        return "not-assistant", None
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    model = message.get("model")
    if model == SYNTHETIC:
        return "synthetic", None
    if "usage" not in message:
        return "no-usage", None
    if not isinstance(model, str) or not model:
        return "malformed", None
    tokens = our_read_tokens(message.get("usage"))
    if tokens is None:
        return "malformed", None
    origin = None
    forked = record.get("forkedFrom")
    for value in ((forked or {}).get("sessionId") if isinstance(forked, dict) else None, forked, record.get("sessionId")):
        if isinstance(value, str) and value != session and SESSION_ID_RE.match(value):
            origin = value
            break
    speed = message["usage"].get("speed")
    return "candidate", {
        "message_id": message.get("id") if isinstance(message.get("id"), str) else None,
        "request_id": record.get("requestId") if isinstance(record.get("requestId"), str) else None,
        "model": model, "tokens": tokens, "at": instant_of(record.get("timestamp")),
        "speed": speed if isinstance(speed, str) else None, "origin": origin,
    }


def split_inline(records: list[tuple[int, dict[str, Any]]]) -> tuple[list[tuple[int, dict[str, Any]]], list[list[tuple[int, dict[str, Any]]]]]:
    """parse/session.py split_sidechains: isSidechain records of a main file, grouped by chain."""
    main: list[tuple[int, dict[str, Any]]] = []
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    owner_of: dict[str, str] = {}
    current: str | None = None
    for number, data in records:
        if data.get("isSidechain") is not True:
            main.append((number, data))
            continue
        uuid = data.get("uuid") if isinstance(data.get("uuid"), str) else None
        parent = data.get("parentUuid") if isinstance(data.get("parentUuid"), str) else None
        group = owner_of.get(parent or "")
        if group is None and (parent is None or current is None):
            group = uuid if uuid and INLINE_ID_RE.match(uuid) and uuid not in groups else f"sidechain-{number}"
            groups[group] = []
        elif group is None:
            group = current
        current = group
        groups[group].append((number, data))
        if uuid:
            owner_of[uuid] = group
    return main, list(groups.values())


def dedupe_file(rows: list[OurRow]) -> list[OurRow]:
    """Most output_tokens per request (requestId, else message.id), ties to the last; neither: each record alone."""
    kept: dict[Any, OurRow] = {}
    for position, row in enumerate(rows):
        # By position, not line: two records glued on one line share the line number.
        key = ("request", row.request_id) if row.request_id is not None else ("message", row.message_id) if row.message_id is not None else ("record", position)
        if key not in kept or row.tokens["output"] >= kept[key].tokens["output"]:
            kept[key] = row
    return list(kept.values())


@dataclass
class OurSession:
    session_id: str
    project: str
    cost: Decimal | None
    excluded: str | None
    tokens: dict[str, int] | None
    main_ended_at: str | None
    kinds: dict[str, str]
    main_state: str  # present | empty | absent (data/sessions/<sid>.json main_transcript)
    files: list[str] = field(default_factory=list)


def load_our_output(out: Path) -> tuple[dict[str, OurSession], dict[str, Any], dict[str, tuple[str, str]]]:
    index = json.loads((out / "data" / "index.json").read_text())
    sessions = {}
    for path in sorted((out / "data" / "sessions").glob("*.json")):
        data = json.loads(path.read_text())
        main = next((a for a in data["agents"] if a["agent_id"] == data["session_id"]), None)
        excluded = data.get("excluded")
        sessions[data["session_id"]] = OurSession(
            session_id=data["session_id"], project=data["project"],
            cost=Decimal(data["cost_usd"]) if data.get("cost_usd") is not None else None,
            excluded=(excluded or {}).get("reason") if isinstance(excluded, dict) else excluded,
            tokens=data["tokens"], main_ended_at=main["last_seen_at"] if main else None,
            kinds={a["agent_id"]: a["kind"] for a in data["agents"]},
            main_state=data.get("main_transcript", "present"),
        )
    skipped = {item["path"]: (item["reason"], item.get("detail") or "") for item in index["report"]["skipped"]}
    return sessions, index, skipped


def _sniff_session(path: Path) -> str | None:
    """corpus/sniff.py: the first sessionId among the records of the first 64 KiB.

    Only used for files the build did not skip, so reading a complete last line too (a record
    since issue 13) cannot name a session the build did not.
    """
    data = path.read_bytes()
    pieces = data[: 64 * 1024].split(b"\n")
    if len(data) > 64 * 1024:
        pieces.pop()  # cut at the limit: not a record
    for raw in pieces:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("sessionId"), str) and record["sessionId"]:
            return record["sessionId"]
    return None


def our_session_files(root: Path, sessions: dict[str, OurSession], skipped: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Map each transcript we read to (session id, agent id), as corpus/walk.py assigned it.

    A session is its main transcript when there is one (it may be 0 bytes or absent, issue 13),
    the agent files of `<sid>/` and the flat agent files naming it. A file of another folder's
    copy of the session is in report.skipped (duplicate-session); every other one joins it.
    """
    owner: dict[str, tuple[str, str]] = {}
    for session in sessions.values():
        main = f"{session.project}/{session.session_id}.jsonl"
        if session.main_state != "absent":
            owner[main] = (session.session_id, session.session_id)
    for rel in cc_files(root):
        parts = rel.split("/")
        name = parts[-1]
        if rel in skipped or not name.startswith("agent-"):
            continue
        agent_id = name[len("agent-"):-len(".jsonl")]
        if len(parts) == 2:
            sid = _sniff_session(root / rel)
        elif parts[2:3] == ["subagents"] and (len(parts) == 4 or (len(parts) == 6 and parts[3] == "workflows")):
            sid = parts[1]  # <sid>/subagents/agent-*.jsonl, <sid>/subagents/workflows/<run>/agent-*.jsonl
        else:
            continue
        if sid in sessions:
            owner[rel] = (sid, agent_id)
    return owner


def our_rows(root: Path, sessions: dict[str, OurSession], owner: dict[str, tuple[str, str]]) -> tuple[list[OurRow], dict[tuple[str, int], str]]:
    """Every request each session keeps (parse_session), and why other lines of our files are not counted."""
    by_session: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel, (sid, agent_id) in owner.items():
        by_session[sid].append((rel, agent_id))
    status: dict[tuple[str, int], str] = {}
    rows: list[OurRow] = []
    for sid, files in sorted(by_session.items()):
        session = sessions[sid]
        facts: list[tuple[int, list[OurRow]]] = []
        main_rel = f"{session.project}/{sid}.jsonl"
        agents = sorted((rel, agent_id) for rel, agent_id in files if rel != main_rel)
        mains = [(main_rel, sid)] if (main_rel, sid) in files else []
        seen_agents = {sid}
        for rel, agent_id in [*mains, *agents]:
            if agent_id in seen_agents and rel != main_rel:
                continue  # a repeated agent id: ignored (parse_session, duplicate_agent_file)
            seen_agents.add(agent_id)
            session.files.append(rel)
            records, why_not = our_decode_file((root / rel).read_bytes())
            for number, reason in why_not.items():
                status[(rel, number)] = reason
            fields_of: dict[int, dict[str, Any]] = {}
            for number, record in records:
                why, fields = our_record_status(record, sid)
                status.setdefault((rel, number), why)
                if fields is not None:
                    fields_of[id(record)] = fields
            if rel == main_rel:
                main_records, inline = split_inline(records)
                groups = [(0, main_records)] + [(1, group) for group in inline]
            else:
                groups = [(2 if session.kinds.get(agent_id) in REPLAYING_KINDS else 1, records)]
            for rank, group in groups:
                found = [OurRow(sid, rel, n, **{k: fields_of[id(r)][k] for k in ("message_id", "request_id", "model", "tokens", "at", "speed", "origin")})
                         for n, r in group if id(r) in fields_of]
                facts.append((rank, dedupe_file(found)))
        # dedupe_session: a message id counts once per session, lowest (rank, file position) first.
        best: dict[str, tuple[int, int]] = {}
        for position, (rank, kept) in enumerate(facts):
            for row in kept:
                if row.message_id is not None and (row.message_id not in best or (rank, position) < best[row.message_id]):
                    best[row.message_id] = (rank, position)
        for position, (rank, kept) in enumerate(facts):
            for row in kept:
                if row.message_id is None or best[row.message_id] == (rank, position):
                    rows.append(row)
                else:
                    status[(row.file, row.line)] = "replayed-in-session"
    return rows, status


def _request_keys(row: OurRow) -> list[str]:
    return [key for key in ("m:" + (row.message_id or ""), "r:" + (row.request_id or "")) if len(key) > 2]


def our_ownership(rows: list[OurRow], sessions: dict[str, OurSession]) -> dict[str, str]:
    """views.py _ownership: the owner of each request key ("m:" message id, "r:" requestId) several sessions hold.

    Rows sharing a message id or a requestId are one request (a copy may keep the requestId and
    replace the message id, issue 13), transitively.
    """
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for row in rows:
        keys = _request_keys(row)
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    holders: dict[str, set[str]] = defaultdict(set)
    named: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        keys = _request_keys(row)
        if keys:
            group = find(keys[0])
            holders[group].add(row.session)
            if row.origin:
                named[group].add(row.origin)
    owner_of_group = {}
    for group, ids in holders.items():
        if len(ids) > 1:
            marked = ids & named.get(group, set())
            owner_of_group[group] = min(marked or ids, key=lambda sid: (sessions[sid].main_ended_at or "~", sid))
    return {key: owner_of_group[find(key)] for key in list(parent) if find(key) in owner_of_group}


def price_ours(rows: list[OurRow], sessions: dict[str, OurSession], prices: OurPrices) -> dict[str, str | None]:
    """Apply ownership, price every row; a session that owns an unpriceable row is excluded whole.

    An excluded session's tokens still count (issue 13): only its cost is unknown.
    """
    owners = our_ownership(rows, sessions)
    excluded: dict[str, str | None] = {sid: None for sid in sessions}
    problems: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        holder = next((owners[key] for key in _request_keys(row) if key in owners), row.session)
        row.owned = holder == row.session
        row.cost = prices.cost(row.model, row.tokens, row.at, row.speed)
        if row.owned and isinstance(row.cost, str):
            problems[row.session].add(row.cost)
    for sid, found in problems.items():
        excluded[sid] = "; ".join(sorted(found))
    for row in rows:
        row.counted = row.owned and excluded[row.session] is None
    return excluded


# ---------------------------------------------------------------------------------------------
# joining the two views and explaining the differences

# ccusage reports one cache-write figure: ours are compared as input/output/cache read/cache write.
TOKEN_COLUMNS = ("input", "output", "cache read", "cache write")
Quad = tuple[int, int, int, int]
ZERO4: Quad = (0, 0, 0, 0)
UNEXPLAINED_USD = Decimal("1e-6")  # a per-session residual above this is not float noise


def four(tokens: dict[str, int] | None) -> Quad:
    """Our five categories as ccusage's four (both cache writes in one)."""
    if not tokens:
        return ZERO4
    return (tokens["input"], tokens["output"], tokens["cache_read"], tokens["cache_write_5m"] + tokens["cache_write_1h"])


def cc_four(item: dict[str, Any]) -> Quad:
    return (int(item.get("inputTokens", 0)), int(item.get("outputTokens", 0)), int(item.get("cacheReadTokens", 0)),
            int(item.get("cacheCreationTokens", 0)))


def plus(a: Quad, b: Quad) -> Quad:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def minus(a: Quad, b: Quad) -> Quad:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3])


def quad_text(values: Quad, signed: bool = False) -> str:
    return "/".join(f"{v:+d}" if signed else str(v) for v in values)


@dataclass
class TableRow:
    key: str  # our session id, or ccusage's session id for a ccusage-only row
    project: str
    ours: OurSession | None = None
    cc: dict[str, Any] | None = None
    note: str = ""
    effects: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    token_effects: dict[str, Quad] = field(default_factory=lambda: defaultdict(lambda: ZERO4))
    requests: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @property
    def our_cost(self) -> Decimal:
        return self.ours.cost if self.ours is not None and self.ours.cost is not None else Decimal(0)

    @property
    def cc_cost(self) -> Decimal:
        return dec(self.cc["totalCost"]) if self.cc else Decimal(0)

    @property
    def diff(self) -> Decimal:
        return self.our_cost - self.cc_cost

    @property
    def token_diff(self) -> Quad:
        return minus(four(self.ours.tokens) if self.ours else ZERO4, cc_four(self.cc) if self.cc else ZERO4)

    def rules(self) -> list[str]:
        """The rules with an effect on this row, in report order."""
        return [rule for rule in RULES if abs(self.effects.get(rule, Decimal(0))) >= NOISE or self.token_effects.get(rule, ZERO4) != ZERO4]

    @property
    def cost_residual(self) -> Decimal:
        return self.diff - sum(self.effects.values(), Decimal(0))

    @property
    def token_residual(self) -> Quad:
        explained = ZERO4
        for value in self.token_effects.values():
            explained = plus(explained, value)
        return minus(self.token_diff, explained)

    @property
    def unexplained(self) -> bool:
        """A difference no documented rule accounts for (a residual, or the catch-all rule)."""
        return abs(self.cost_residual) >= UNEXPLAINED_USD or self.token_residual != ZERO4 or "other" in self.rules()


@dataclass
class Comparison:
    corpus: str
    ccusage_version: str
    command: list[str]
    our_exit: int
    rows: list[TableRow]
    our_total: Decimal
    cc_total: Decimal
    our_tokens: dict[str, int]
    cc_tokens: Quad
    checks: list[str]
    rule_totals: dict[str, Decimal]
    rule_tokens: dict[str, Quad]
    rule_sessions: dict[str, set[str]]
    rule_requests: dict[str, int]
    blocks: BlockComparison | None = None

    @property
    def token_diff(self) -> Quad:
        return minus(four(self.our_tokens), self.cc_tokens)

    @property
    def token_residual(self) -> Quad:
        explained = ZERO4
        for value in self.rule_tokens.values():
            explained = plus(explained, value)
        return minus(self.token_diff, explained)

    def problems(self) -> list[str]:
        """Why this corpus makes the exit code 1 (empty: every difference is explained)."""
        found = [f"re-derivation: {check}" for check in self.checks]
        if self.token_residual != ZERO4:
            explained = quad_text(minus(self.token_diff, self.token_residual), True)
            found.append(f"global tokens differ by {quad_text(self.token_diff, True)}, rules explain {explained}")
        if "other" in self.rule_totals or "other" in self.rule_tokens:
            found.append("a difference falls under no documented rule ('other')")
        found += [f"session row {row.key}: difference not explained by a rule" for row in self.rows if row.unexplained]
        if self.blocks is not None:
            found += [f"blocks: {check}" for check in self.blocks.checks]
        return found


def _pricing_rule(model: str, tokens: dict[str, int], speed: str | None, at: str | None, prices: OurPrices, rates: CcRates | None) -> str:
    if prices.tier_applies(model, tokens, at) or (rates is not None and (rates.per_field_tier(tokens) or (
            rates.context_rule and OurPrices.context(tokens) > 200_000))):
        return "long-context-tier"
    if speed == "fast":
        return "fast-multiplier"
    if normalise_model(model) != model.strip().lower() and OUR_PREFIX_RE.match(model.strip().lower()):
        return "provider-rate"
    return "rate-table"


def compare(corpus: Path, ccusage_version: str, command: list[str], keep: bool, end_inclusive: bool = True) -> Comparison:
    tmp = Path(tempfile.mkdtemp(prefix="compare-ccusage-"))
    try:
        root = tmp / "projects"
        shutil.copytree(corpus, root, symlinks=True)
        print(f"\n== {corpus}  (copied to a temporary folder as <tmp>/projects)")
        cc_report = run_ccusage(tmp, command)
        out = tmp / "site"
        our_cmd = _our_command() + ["build", "--corpus", str(root), "--out", str(out), "--cache", str(tmp / "cache"), "--now", NOW, "-q"]
        built = run(our_cmd)
        if built.returncode not in (0, 1):
            sys.exit(f"agenthropic build failed ({built.returncode}): {built.stderr.strip()}")
        sessions, index, skipped = load_our_output(out)

        # --- ccusage, re-derived
        entries, cc_skipped = cc_read_corpus(root)
        rates = probe_ccusage_rates({e.model for e in entries if e.model and e.total}, command, tmp)
        zero = CcRates({c: Decimal(0) for c in CATEGORIES}, {c: None for c in CATEGORIES}, False, Decimal(1))
        for entry in entries:
            entry.cost = rates.get(entry.model or "", zero).cost(entry.tokens, entry.speed) if entry.model else Decimal(0)
        kept, _ = cc_dedupe(entries)

        # --- ours, re-derived
        owner = our_session_files(root, sessions, skipped)
        rows, line_status = our_rows(root, sessions, owner)
        prices = OurPrices(PRICING_JSON)
        excluded = price_ours(rows, sessions, prices)

        checks = _check(cc_report, kept, sessions, index, rows, excluded)
        table = _explain(cc_report, kept, cc_skipped, sessions, rows, owner, skipped, line_status, prices, rates)
        our_total = Decimal(index["totals"]["cost_usd"])
        totals = cc_report.get("totals", {})
        cc_total = dec(totals.get("totalCost", 0))
        rule_totals: dict[str, Decimal] = defaultdict(Decimal)
        rule_tokens: dict[str, Quad] = defaultdict(lambda: ZERO4)
        rule_sessions: dict[str, set[str]] = defaultdict(set)
        rule_requests: dict[str, int] = defaultdict(int)
        for row in table:
            for rule in row.rules():
                rule_totals[rule] += row.effects.get(rule, Decimal(0))
                rule_tokens[rule] = plus(rule_tokens[rule], row.token_effects.get(rule, ZERO4))
                rule_sessions[rule].add(row.key)
                rule_requests[rule] += row.requests[rule]
        blocks = compare_blocks(run_ccusage(tmp, blocks_command(command)), json.loads((out / "data" / "usage.json").read_bytes()),
                                [row.at for row in rows if row.owned], [entry.timestamp for entry in kept], end_inclusive)
        return Comparison(str(corpus), ccusage_version, command, built.returncode, table, our_total, cc_total,
                          index["totals"]["tokens"], cc_four(totals), checks, dict(rule_totals), dict(rule_tokens),
                          dict(rule_sessions), dict(rule_requests), blocks)
    finally:
        if keep:
            print(f"  kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _our_command() -> list[str]:
    venv = REPO / ".venv" / "bin" / "agenthropic"
    if venv.exists():
        return [str(venv)]
    found = shutil.which("agenthropic")
    return [found] if found else [sys.executable, "-m", "agenthropic_site"]


def _check(cc_report: dict[str, Any], kept: list[CcEntry], sessions: dict[str, OurSession], index: dict[str, Any], rows: list[OurRow],
           excluded: dict[str, str | None]) -> list[str]:
    """Do the re-derived rules reproduce both tools' per-session figures, dollars and tokens?"""
    problems = []
    simulated: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    simulated_tokens: dict[tuple[str, str], Quad] = defaultdict(lambda: ZERO4)
    for entry in kept:
        simulated[entry.session] += entry.cost
        simulated_tokens[entry.session] = plus(simulated_tokens[entry.session], four(entry.tokens))
    reported = {(s["projectPath"], s["sessionId"]): s for s in cc_report.get("sessions", [])}
    for key in sorted(set(simulated) | set(reported)):
        cost = dec(reported[key]["totalCost"]) if key in reported else Decimal(0)
        if abs(simulated.get(key, Decimal(0)) - cost) > Decimal("1e-8"):
            problems.append(f"ccusage rules re-derived here give {usd(simulated.get(key), 8)} for {key[1]} ({key[0]}), ccusage says {usd(cost, 8)}")
        tokens = cc_four(reported[key]) if key in reported else ZERO4
        if simulated_tokens.get(key, ZERO4) != tokens:
            derived = quad_text(simulated_tokens.get(key, ZERO4))
            problems.append(f"ccusage rules re-derived here give tokens {derived} for {key[1]} ({key[0]}), ccusage says {quad_text(tokens)}")
    ours: dict[str, Decimal] = defaultdict(Decimal)
    our_tokens: dict[str, Quad] = defaultdict(lambda: ZERO4)
    for row in rows:
        if row.counted and isinstance(row.cost, Decimal):
            ours[row.session] += row.cost
        if row.owned:
            our_tokens[row.session] = plus(our_tokens[row.session], four(row.tokens))
    total = ZERO4
    for sid, session in sessions.items():
        if (excluded[sid] is None) != (session.excluded is None):
            ours, build = ("exclude" if excluded[sid] else "price"), ("excludes" if session.excluded else "prices")
            problems.append(f"our rules re-derived here {ours} {sid}, the build {build} it")
        elif session.cost is not None and ours[sid].quantize(Decimal("1e-10")) != session.cost:
            problems.append(f"our rules re-derived here give {ours[sid]} for {sid}, the build says {session.cost}")
        if session.tokens is None:
            problems.append(f"the build gives no token counts for {sid}")
        elif our_tokens.get(sid, ZERO4) != four(session.tokens):
            derived = quad_text(our_tokens.get(sid, ZERO4))
            problems.append(f"our rules re-derived here give tokens {derived} for {sid}, the build says {quad_text(four(session.tokens))}")
        total = plus(total, four(session.tokens))
    if total != four(index["totals"]["tokens"]):
        problems.append(f"the build's totals.tokens {quad_text(four(index['totals']['tokens']))} are not the sum of its sessions {quad_text(total)}")
    return problems


def _explain(cc_report: dict[str, Any], kept: list[CcEntry], cc_skipped: dict[tuple[str, int], str], sessions: dict[str, OurSession],
             rows: list[OurRow], owner: dict[str, tuple[str, str]], skipped: dict[str, tuple[str, str]],
             line_status: dict[tuple[str, int], str], prices: OurPrices, rates: dict[str, CcRates]) -> list[TableRow]:
    table: dict[str, TableRow] = {}
    for sid, session in sessions.items():
        table[sid] = TableRow(sid, session.project, ours=session)
    cc_row_of: dict[tuple[str, str], str] = {}
    for item in cc_report.get("sessions", []):
        key = (item["projectPath"], item["sessionId"])
        ours = sessions.get(item["sessionId"])
        if ours is not None and ours.project == item["projectPath"]:
            table[ours.session_id].cc = item
            cc_row_of[key] = ours.session_id
        else:
            name = item["sessionId"] if item["sessionId"] not in table else f"{item['sessionId']} ({item['projectPath']})"
            table[name] = TableRow(name, item["projectPath"], cc=item)
            cc_row_of[key] = name

    def cc_row(entry: CcEntry) -> str:
        key = cc_row_of.get(entry.session)
        if key is None:  # a ccusage session with no cost and no tokens is still a row of its report
            key = cc_row_of[entry.session] = entry.session[1]
            table.setdefault(key, TableRow(key, entry.session[0]))
        return key

    def add(row: str, rule: str, amount: Decimal, tokens: Quad = ZERO4, count: bool = True) -> None:
        """Record that `rule` makes ours − ccusage on `row` differ by `amount` dollars and `tokens`."""
        table[row].effects[rule] += amount
        table[row].token_effects[rule] = plus(table[row].token_effects[rule], tokens)
        table[row].requests[rule] += 1 if count else 0

    def attribution_rule(entry: CcEntry, mine: OurRow) -> str:
        parts = entry.file.split("/")
        if len(parts) == 2 and parts[1].startswith("agent-"):
            # Since issue 13 a session whose main transcript is empty or gone is built from its agent files.
            return "orphan-agent-file" if sessions[mine.session].main_state != "present" else "flat-agent-file"
        if "workflows" in parts[:-1]:
            return "workflow-folder"
        return "replay-ownership"

    our_requests = {(row.file, row.request_id) for row in rows if row.request_id is not None}

    def why_not_ours(entry: CcEntry, group: list[OurRow]) -> str:
        if entry.file not in owner:
            reason, _detail = skipped.get(entry.file, ("", ""))
            return "duplicate-session" if reason == "duplicate-session" else "skipped-file"
        if group:
            if any(r.owned for r in group):
                return "sidechain-replay" if entry.sidechain else "id-replay-new-request"
            # Every copy of this message id is owned elsewhere, so under another message id: one
            # request (same requestId), copied with its message id replaced.
            return "request-id-copy"
        if entry.request_id is not None and (entry.file, entry.request_id) in our_requests:
            # A line of a request we keep under another of its message ids: a copy that replaced
            # message.id by each record's uuid splits one request into one key per line for ccusage.
            return "request-id-copy"
        status = line_status.get((entry.file, entry.line), "")
        return {"not-assistant": "non-assistant-usage", "malformed": "malformed-usage", "synthetic": "synthetic-usage"}.get(status, "other")

    groups_ours: dict[Any, list[OurRow]] = defaultdict(list)
    for row in rows:
        groups_ours[("id", row.message_id) if row.message_id is not None else ("line", row.file, row.line)].append(row)
    groups_cc: dict[Any, list[CcEntry]] = defaultdict(list)
    for entry in kept:
        groups_cc[("id", entry.message_id) if entry.message_id is not None else ("line", entry.file, entry.line)].append(entry)

    for key in sorted(set(groups_ours) | set(groups_cc), key=repr):
        ours_all = groups_ours.get(key, [])
        ccs = list(groups_cc.get(key, []))
        for mine in (r for r in ours_all if r.owned):
            our_cost = mine.cost if mine.counted and isinstance(mine.cost, Decimal) else Decimal(0)
            # Pair our request with ccusage's copy on the same line, else in the same file, else
            # in the same session, else any copy of the same message.
            match = (next((e for e in ccs if (e.file, e.line) == (mine.file, mine.line)), None)
                     or next((e for e in ccs if e.file == mine.file and e.request_id == mine.request_id), None)
                     or next((e for e in ccs if cc_row(e) == mine.session), None)
                     or (ccs[0] if ccs else None))
            if match is None:
                why = cc_skipped.get((mine.file, mine.line), "other")
                rule = ("ccusage-skipped-line" if why in ("null-field", "no-timestamp", "version", "bad-field")
                        else "glued-records" if why == "invalid-json" and line_status.get((mine.file, mine.line)) == "glued" else "other")
                add(mine.session, rule, our_cost, four(mine.tokens))
                continue
            ccs.remove(match)
            theirs = cc_row(match)
            if theirs != mine.session:
                rule = attribution_rule(match, mine)
                add(mine.session, rule, match.cost, four(match.tokens))
                add(theirs, rule, -match.cost, minus(ZERO4, four(match.tokens)), count=False)
            if mine.tokens != match.tokens:
                add(mine.session, "dedupe-line-choice", Decimal(0), minus(four(mine.tokens), four(match.tokens)), count=False)
            if not mine.counted:
                add(mine.session, "halt-gate", -match.cost)  # its tokens count, its cost does not
                continue
            delta = our_cost - match.cost
            if mine.tokens != match.tokens:
                # Split: the line ccusage kept, at our price, is the dedupe part; the rest is price.
                alt = prices.cost(mine.model, match.tokens, mine.at, match.speed)
                if isinstance(alt, Decimal):
                    add(mine.session, "dedupe-line-choice", our_cost - alt)
                    delta = alt - match.cost
                else:
                    add(mine.session, "dedupe-line-choice", delta)
                    delta = Decimal(0)
            if abs(delta) >= NOISE:
                add(mine.session, _pricing_rule(mine.model, match.tokens, match.speed, mine.at, prices, rates.get(match.model or "")), delta)
        for entry in ccs:
            add(cc_row(entry), why_not_ours(entry, ours_all), -entry.cost, minus(ZERO4, four(entry.tokens)))

    result = sorted(table.values(), key=lambda r: (r.project, r.key))
    for row in result:
        if row.ours is None and row.cc is not None:
            sid = row.cc["sessionId"]
            parts = [rel for rel in owner if cc_session_key(rel) == (row.cc["projectPath"], sid)]
            if parts:
                row.note = "ours: in session " + ", ".join(sorted({owner[rel][0] for rel in parts}))
            else:
                reasons = sorted({skipped[rel][0] for rel in skipped if cc_session_key(rel) == (row.cc["projectPath"], sid)})
                row.note = "ours: not read (" + ", ".join(reasons) + ")" if reasons else "ours: not read"
        elif row.ours is not None and row.ours.excluded:
            row.note = "ours: unpriced (" + row.ours.excluded + ")"
        elif row.ours is not None and row.ours.main_state != "present":
            row.note = f"ours: main transcript {row.ours.main_state}, built from its agent files"
    return result


# ---------------------------------------------------------------------------------------------
# report


def _tokens_ours(row: TableRow) -> str:
    if row.ours is None or not row.ours.tokens:
        return "—"
    t = row.ours.tokens
    return f"{t['input']}/{t['output']}/{t['cache_read']}/{t['cache_write_5m']}/{t['cache_write_1h']}"


def _tokens_cc(row: TableRow) -> str:
    if row.cc is None:
        return "—"
    c = row.cc
    return f"{c['inputTokens']}/{c['outputTokens']}/{c['cacheReadTokens']}/{c['cacheCreationTokens']}"


def _our_cost_text(row: TableRow) -> str:
    if row.ours is None:
        return "—"
    return "unpriced" if row.ours.cost is None else usd(row.ours.cost)


def token_totals_line(result: Comparison) -> str:
    """One line: the global token totals of both tools, category by category, and whether they agree."""
    ours, theirs = four(result.our_tokens), result.cc_tokens
    cells = [f"{name} {a} {'=' if a == b else '≠'} {b}" for name, a, b in zip(TOKEN_COLUMNS, ours, theirs)]
    split = f"ours cache write = 5m {result.our_tokens['cache_write_5m']} + 1h {result.our_tokens['cache_write_1h']}"
    if ours == theirs:
        verdict = "EQUAL"
    elif result.token_residual == ZERO4:
        verdict = f"DIFFERENT by {quad_text(result.token_diff, True)}, every token explained by the rules below"
    else:
        verdict = f"DIFFERENT by {quad_text(result.token_diff, True)}, UNEXPLAINED {quad_text(result.token_residual, True)}"
    return f"Global token totals, ours vs ccusage: {', '.join(cells)} ({split}): {verdict}"


def _rule_line(rule: str, amount: Decimal, tokens: Quad, requests: int) -> str:
    count = f" ({requests} request(s))" if requests else ""
    moved = "; tokens " + quad_text(tokens, True) if tokens != ZERO4 else ""
    return f"      {_signed(amount)}{moved}  {rule}{count}: {RULES[rule]}"


def print_comparison(result: Comparison, markdown: bool) -> None:
    header = ("session", "project", "ours in/out/read/w5m/w1h", "ccusage in/out/read/write", "ours $", "ccusage $", "ours − ccusage $")
    body = [(r.key, r.project, _tokens_ours(r), _tokens_cc(r), _our_cost_text(r), usd(r.cc_cost) if r.cc else "—", _signed(r.diff)) for r in result.rows]
    t = result.our_tokens
    c = result.cc_tokens
    total = ("total", "", f"{t['input']}/{t['output']}/{t['cache_read']}/{t['cache_write_5m']}/{t['cache_write_1h']}",
             quad_text(c), usd(result.our_total), usd(result.cc_total), _signed(result.our_total - result.cc_total))
    _table(header, body + [total], markdown)
    print("\n" + token_totals_line(result))
    differing = [r for r in result.rows if abs(r.diff) > HALF_CENT or r.token_diff != ZERO4 or r.unexplained]
    print(f"\nSession rows whose cost differs by more than half a cent or whose tokens differ: {len(differing)} of {len(result.rows)}"
          " (per rule: ours − ccusage in $; tokens in/out/read/write)")
    for row in differing:
        print(f"  {row.key} ({row.project}): ours − ccusage = {_signed(row.diff)}; tokens {quad_text(row.token_diff, True)}"
              + (f"; {row.note}" if row.note else ""))
        for rule in row.rules():
            print(_rule_line(rule, row.effects.get(rule, Decimal(0)), row.token_effects.get(rule, ZERO4), row.requests[rule]))
        if abs(row.cost_residual) >= UNEXPLAINED_USD or row.token_residual != ZERO4:
            print(f"      {_signed(row.cost_residual)}; tokens {quad_text(row.token_residual, True)}  UNEXPLAINED")
    agree = [r for r in result.rows if not r.rules() and r.ours and r.cc]
    worst = max((abs(r.diff) for r in agree), default=Decimal(0))
    if agree:
        same_tokens = sum(1 for r in agree if r.token_diff == ZERO4)
        print(f"\nSessions that both tools report and where no rule differs: {len(agree)}; the largest |ours − ccusage| among them "
              f"is ${worst:.10f} ({'they agree to the cent' if worst < HALF_CENT else 'NOT within a cent'}); "
              f"{same_tokens} of them have the same tokens.")
    else:
        print("\nNo session is reported by both tools without a rule difference.")
    print("\nEffect of each rule on the corpus total (ours − ccusage; tokens in/out/read/write):")
    explained = Decimal(0)
    for rule in RULES:
        if rule in result.rule_totals:
            amount = result.rule_totals[rule]
            tokens = result.rule_tokens.get(rule, ZERO4)
            explained += amount
            moved = " (moves between session rows)" if abs(amount) < NOISE and tokens == ZERO4 else ""
            token_text = f"; tokens {quad_text(tokens, True)}" if tokens != ZERO4 else ""
            print(f"  {_signed(amount)}{token_text}  {rule}: {result.rule_requests[rule]} request(s), {len(result.rule_sessions[rule])} session row(s){moved}")
    print(f"  total explained {_signed(explained)}; actual {_signed(result.our_total - result.cc_total)}; "
          f"ccusage + explained − ours = {_signed(result.cc_total + explained - result.our_total, 10)}")
    if result.checks:
        print("\nWARNING: the re-derived rules do not reproduce every figure:")
        for problem in result.checks:
            print("  " + problem)
    else:
        print("\nCheck: the re-derived rules reproduce every per-session figure of both tools (dollars and tokens).")


def print_summary(results: list[Comparison]) -> None:
    """One line per corpus: global tokens and dollars of both tools, and whether every difference is explained."""
    print("\n== Summary")
    for result in results:
        ours, theirs = four(result.our_tokens), result.cc_tokens
        tokens = "equal" if ours == theirs else f"differ by {quad_text(result.token_diff, True)}"
        verdict = "every difference explained by a rule" if not result.problems() else "NOT EXPLAINED: " + "; ".join(result.problems())
        print(f"  {result.corpus}: tokens in/out/read/write ours {quad_text(ours)}, ccusage {quad_text(theirs)} ({tokens}); "
              f"${usd(result.our_total)} vs ${usd(result.cc_total)}; {verdict}")
        if result.blocks is not None:
            b = result.blocks
            print(f"    5-hour blocks: ours {len(b.ours)}, ccusage {len(b.theirs)}, {b.same} with the same start and end "
                  f"({b.same_tokens} of them with the same tokens); boundary differences by rule: "
                  + (", ".join(f"{rule} {count}" for rule, count in sorted(b.explained.items())) or "none"))


def _signed(amount: Decimal, places: int = 4) -> str:
    """A signed amount, with no '-0.0000' for float noise."""
    rounded = amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP) + 0
    return f"{rounded:+.{places}f}" if rounded else f"{0:+.{places}f}"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|")
        for row in rows:
            print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        return
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for index, row in enumerate([header, *rows]):
        print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))


def _plain(amount: Decimal) -> str:
    return format(amount.quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP) + 0, "f")


def as_json(result: Comparison) -> dict[str, Any]:
    return {
        "corpus": result.corpus,
        "ccusage_version": result.ccusage_version,
        "ccusage_command": ["ccusage", *result.command],
        "ours_total_usd": _plain(result.our_total),
        "ccusage_total_usd": _plain(result.cc_total),
        "ours_tokens": dict(zip(TOKEN_COLUMNS, four(result.our_tokens))),
        "ccusage_tokens": dict(zip(TOKEN_COLUMNS, result.cc_tokens)),
        "tokens_equal": four(result.our_tokens) == result.cc_tokens,
        "rules": {rule: {"usd": _plain(amount), "tokens": dict(zip(TOKEN_COLUMNS, result.rule_tokens.get(rule, ZERO4))),
                         "requests": result.rule_requests[rule], "sessions": sorted(result.rule_sessions[rule])}
                  for rule, amount in result.rule_totals.items()},
        "sessions": [
            {"session": r.key, "project": r.project, "ours_usd": str(r.ours.cost) if r.ours and r.ours.cost is not None else None,
             "ccusage_usd": _plain(r.cc_cost) if r.cc else None, "diff_usd": _plain(r.diff),
             "diff_tokens": dict(zip(TOKEN_COLUMNS, r.token_diff)), "note": r.note,
             "rules": {k: _plain(r.effects.get(k, Decimal(0))) for k in r.rules()}, "unexplained": r.unexplained}
            for r in result.rows
        ],
        "checks": result.checks,
        "blocks": None if result.blocks is None else {
            "ours": len(result.blocks.ours), "ccusage": len(result.blocks.theirs), "same_bounds": result.blocks.same,
            "same_tokens": result.blocks.same_tokens, "only_ours": result.blocks.only_ours, "only_ccusage": result.blocks.only_theirs,
            "explained": result.blocks.explained,
        },
        "problems": result.problems(),
    }


# ---------------------------------------------------------------------------------------------
# 5-hour blocks: `ccusage claude blocks` against our data/usage.json (docs/cost.md, "Usage windows")

BLOCK = timedelta(hours=5)
BLOCK_RULES = {
    "counted-requests": (
        "the two tools count different requests, or the same request at another time (the session rules "
        "above: sidechain replays at the replay's time, copies under a replaced message id, lines one tool skips)"
    ),
    "block-end-instant": ("a request at exactly the block's start + 5 h: we keep it in that block (ccusage's rule when this was "
                          "written), this ccusage starts the next one"),
}


def utc_instant(text: str | None) -> datetime | None:
    """Parse an ISO instant to aware UTC (None when there is none)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def cut_blocks(times: Iterable[datetime | None], end_inclusive: bool) -> list[datetime]:
    """Return the block starts of request times: the first request's UTC hour, 5 h long, a new block after a gap over 5 h
    or at the end (past it with `end_inclusive`, ccusage's `>`)."""
    starts: list[datetime] = []
    previous: datetime | None = None
    for moment in sorted(t for t in times if t is not None):
        if previous is None:
            past_end = True
        else:
            past_end = moment - starts[-1] > BLOCK if end_inclusive else moment - starts[-1] >= BLOCK
        if past_end or (previous is not None and moment - previous > BLOCK):
            starts.append(moment.replace(minute=0, second=0, microsecond=0))
        previous = moment
    return starts


def blocks_command(command: list[str]) -> list[str]:
    """The `blocks` form of the session command (same options)."""
    return [("blocks" if part == "session" else part) for part in command]


def probe_block_end(command: list[str]) -> bool:
    """Measure whether ccusage keeps a request at exactly the block's start + 5 h in that block (one session, two requests)."""
    tmp = Path(tempfile.mkdtemp(prefix="compare-ccusage-blocks-"))
    try:
        folder = tmp / "projects" / "-probe"
        folder.mkdir(parents=True)
        lines = []
        for number, moment in enumerate(("2026-01-01T10:20:00.000Z", "2026-01-01T15:00:00.000Z")):
            lines.append(json.dumps({
                "type": "assistant", "timestamp": moment, "sessionId": "probe-blocks", "version": "2.1.0", "requestId": f"req_b{number}",
                "isSidechain": False, "uuid": f"b{number}",
                "message": {"id": f"msg_b{number}", "model": "claude-sonnet-4-5", "role": "assistant", "usage": _probe_usage("input", 10)},
            }, separators=(",", ":")))
        (folder / "probe-blocks.jsonl").write_text("\n".join(lines) + "\n")
        found = [b for b in run_ccusage(tmp, blocks_command(command)).get("blocks", []) if not b.get("isGap")]
        return len(found) == 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class BlockComparison:
    """Both tools' blocks (UTC start, end, total tokens) and the rule behind each boundary difference."""

    ours: list[tuple[str, str, int]]
    theirs: list[tuple[str, str, int]]
    same: int
    same_tokens: int
    only_ours: list[str]
    only_theirs: list[str]
    explained: dict[str, int]
    checks: list[str]


def compare_blocks(cc_report: dict[str, Any], usage: dict[str, Any], our_times: list[str | None], cc_times: list[str],
                   end_inclusive: bool) -> BlockComparison:
    """Compare block boundaries; check that each tool's blocks are its own requests cut by its rule; name the rule of each difference."""

    def key(moment: datetime | None) -> str:
        return "" if moment is None else moment.strftime("%Y-%m-%dT%H:%M")

    ours = [(key(utc_instant(b["start"])), key(utc_instant(b["end"])), sum(b["tokens"].values())) for b in usage.get("blocks", [])]
    theirs = [(key(utc_instant(b["startTime"])), key(utc_instant(b["endTime"])), int(b.get("totalTokens", 0)))
              for b in cc_report.get("blocks", []) if not b.get("isGap")]
    checks = []
    ours_cut = [key(t) for t in cut_blocks([utc_instant(t) for t in our_times], end_inclusive=True)]
    if ours_cut != [start for start, _, _ in ours]:
        checks.append("our requests cut by our rule do not give our data/usage.json blocks")
    cc_cut = [key(t) for t in cut_blocks([utc_instant(t) for t in cc_times], end_inclusive)]
    if cc_cut != [start for start, _, _ in theirs]:
        checks.append("ccusage's requests (re-derived) cut by its measured rule do not give its blocks")
    # ccusage's own requests under our end rule: what differs from ccusage is the end rule, what differs from us the requests.
    their_requests_our_rule = {key(t) for t in cut_blocks([utc_instant(t) for t in cc_times], end_inclusive=True)}
    our_bounds = {(start, end) for start, end, _ in ours}
    their_bounds = {(start, end) for start, end, _ in theirs}
    only_ours = sorted(start for start, _ in our_bounds - their_bounds)
    only_theirs = sorted(start for start, _ in their_bounds - our_bounds)
    explained: dict[str, int] = defaultdict(int)
    for start in only_ours:
        explained["block-end-instant" if start in their_requests_our_rule else "counted-requests"] += 1
    for start in only_theirs:
        explained["block-end-instant" if start not in their_requests_our_rule else "counted-requests"] += 1
    tokens_of = {start: tokens for start, _, tokens in theirs}
    same = our_bounds & their_bounds
    same_tokens = sum(1 for start, end, tokens in ours if (start, end) in same and tokens_of.get(start) == tokens)
    return BlockComparison(ours, theirs, len(same), same_tokens, only_ours, only_theirs, dict(explained), checks)


def print_blocks(result: BlockComparison) -> None:
    """Print the block comparison of one corpus."""
    print(f"\n5-hour blocks: ours {len(result.ours)}, ccusage {len(result.theirs)}; {result.same} with the same start and end, "
          f"{result.same_tokens} of them with the same tokens (the others differ by the session rules above).")
    for label, starts in (("only ours", result.only_ours), ("only ccusage", result.only_theirs)):
        if starts:
            print(f"  {label}: {', '.join(starts)}")
    for rule, count in sorted(result.explained.items()):
        print(f"  {count} boundary difference(s): {rule}: {BLOCK_RULES[rule]}")
    for check in result.checks:
        print(f"  WARNING: {check}")
    if not result.checks:
        print("  Check: each tool's blocks are its own requests cut by its rule.")


def default_corpora() -> list[Path]:
    """The demo corpus, and every folder of $AGENTHROPIC_SHARED_DIR/corpora when it is set."""
    corpora = [DEMO_CORPUS]
    shared = os.environ.get("AGENTHROPIC_SHARED_DIR")
    if shared and (Path(shared) / "corpora").is_dir():
        corpora += sorted(path for path in (Path(shared) / "corpora").iterdir() if path.is_dir())
    return corpora


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, action="append", help="a ~/.claude/projects-like folder (repeatable)")
    parser.add_argument("--ccusage-version", help="install this ccusage version instead of the newest that runs here")
    parser.add_argument("--markdown", action="store_true", help="print the session table as Markdown")
    parser.add_argument("--json", type=Path, help="also write the comparison as JSON to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    args = parser.parse_args()
    corpora = args.corpus or default_corpora()
    for corpus in corpora:
        if not corpus.is_dir():
            sys.exit(f"not a folder: {corpus}")
    version = ensure_ccusage(args.ccusage_version)
    command = session_command()
    print(f"ccusage {version}: ccusage {' '.join(command)}  (CLAUDE_CONFIG_DIR=<tmp>)")
    end_inclusive = probe_block_end(command)
    print(f"ccusage {' '.join(blocks_command(command))}: a request at exactly a block's start + 5 h is "
          + ("kept in that block (measured), as with us" if end_inclusive else "the start of the next block (measured): ccusage changed its rule"))
    print(f"agenthropic: agenthropic build --corpus <tmp>/projects --out <tmp>/site --cache <tmp>/cache --now {NOW} -q")
    results = []
    for corpus in corpora:
        result = compare(corpus.resolve(), version, command, args.keep, end_inclusive)
        print(f"agenthropic exit code {result.our_exit}" + (" (some session left unpriced)" if result.our_exit == 1 else ""))
        print_comparison(result, args.markdown)
        if result.blocks is not None:
            print_blocks(result.blocks)
        results.append(result)
    print_summary(results)
    if args.json:
        args.json.write_text(json.dumps([as_json(r) for r in results], indent=2) + "\n")
    return 1 if any(r.problems() for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
