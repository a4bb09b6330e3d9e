"""Usage windows (data/usage.json, the index's usage section) against the demo corpus's ground truth, and `--tz`."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.cli import main
from agenthropic_site.config import BuildConfig, check_zone, parse_instant
from agenthropic_site.model import corpus_usage as usage_module
from agenthropic_site.model.usage import UsageRequest, Window, block_starts, usage_windows
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.parse.model import Tokens
from agenthropic_site.render.formats import duration, duration_seconds, epoch_ms, short_time
from agenthropic_site.render.usage import TABLE_ROWS
from conftest import DEMO_CORPUS, DEMO_EXPECTED, DEMO_NOW, build
from test_incremental import SESSION

CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
ZONES = ("UTC", "Asia/Kolkata", "America/New_York")  # whole hours, +05:30, and a zone with DST changes in the demo's span
FIVE_HOURS = timedelta(hours=5)


# -- ground truth: the generator's record of every counted request, summed here on its own terms ----------------------


def truth_requests() -> list[dict[str, Any]]:
    """Return every request the generator counted, with its session and its cost as the site may state it."""
    requests = []
    for path in sorted(DEMO_EXPECTED.glob("*-*.json")):
        doc = json.loads(path.read_bytes())
        for request in doc["requests"]:
            # The halt gate: a session with an unpriced request states no cost at all; its tokens count.
            cost = None if doc["cost_usd"] is None else Decimal(request["cost_usd"])
            at = datetime.strptime(request["at"], "%Y-%m-%dT%H:%M:%S.%f%z")
            requests.append({"session": doc["session_id"], "at": at, "model": request["model"], "tokens": request["tokens"], "cost": cost})
    return sorted(requests, key=lambda r: r["at"])


def entry(start: datetime, end: datetime, members: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum the requests of one window as data/usage.json states it."""
    priced = [r["cost"] for r in members if r["cost"] is not None]
    return {
        "start": start.isoformat(), "end": end.isoformat(),
        "tokens": {c: sum(r["tokens"][c] for r in members) for c in CATEGORIES},
        "cost_usd": f"{sum(priced, Decimal(0)):.10f}" if priced else None,
        "cost_complete": len(priced) == len(members),
        "requests": len(members),
        "sessions": len({r["session"] for r in members}),
        "models": sorted({r["model"] for r in members}),
    }


def truth_blocks(requests: list[dict[str, Any]], zone: ZoneInfo) -> list[dict[str, Any]]:
    """Cut 5-hour blocks by the stated rule: UTC hour of the first request; a new one past the end or after a gap over 5 h."""
    groups: list[tuple[datetime, list[dict[str, Any]]]] = []
    for request in requests:
        at = request["at"].astimezone(UTC)
        if not groups or at - groups[-1][0] > FIVE_HOURS or at - groups[-1][1][-1]["at"] > FIVE_HOURS:
            groups.append((datetime(at.year, at.month, at.day, at.hour, tzinfo=UTC), []))
        groups[-1][1].append(request)
    return [entry(start.astimezone(zone), (start + FIVE_HOURS).astimezone(zone), members) for start, members in groups]


def truth_calendar(requests: list[dict[str, Any]], zone: ZoneInfo, kind: str) -> list[dict[str, Any]]:
    """Group requests by the local day, ISO week or month they fall in, each window from local midnight to local midnight."""
    groups: dict[date, list[dict[str, Any]]] = {}
    for request in requests:
        day = request["at"].astimezone(zone).date()
        first = {"days": day, "weeks": day - timedelta(days=day.isoweekday() - 1), "months": day.replace(day=1)}[kind]
        groups.setdefault(first, []).append(request)

    def midnight(day: date) -> datetime:
        # No demo day of these zones starts in a DST gap: the wall-clock midnight exists.
        return datetime.combine(day, time(0), tzinfo=zone)

    out = []
    for first in sorted(groups):
        if kind == "days":
            following = first + timedelta(days=1)
        elif kind == "weeks":
            following = first + timedelta(weeks=1)
        else:
            following = date(first.year + first.month // 12, first.month % 12 + 1, 1)
        out.append(entry(midnight(first), midnight(following), groups[first]))
    return out


def truth_usage(tz: str) -> dict[str, Any]:
    """Return data/usage.json as the ground truth gives it for one zone."""
    zone = ZoneInfo(tz)
    requests = truth_requests()
    return {
        "tz": tz,
        "blocks": truth_blocks(requests, zone),
        **{kind: truth_calendar(requests, zone, kind) for kind in ("days", "weeks", "months")},
        "untimed": {"requests": 0, "tokens": {c: 0 for c in CATEGORIES}},
    }


@pytest.fixture(scope="module", params=ZONES)
def zoned_site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """Build the demo corpus with `--tz` set to each zone."""
    tz = request.param
    folder = tmp_path_factory.mktemp("usage-" + tz.replace("/", "-"))
    assert build(DEMO_CORPUS, folder / "site", folder / "cache", "--tz", tz) in (0, 1)
    return tz, folder / "site"


# -- data/usage.json --------------------------------------------------------------------------------------------------------


def test_usage_json_matches_the_ground_truth(zoned_site: tuple[str, Path]) -> None:
    """Every block, day, week and month of data/usage.json: bounds, tokens, cost, completeness, sessions and models."""
    tz, site = zoned_site
    built = json.loads((site / "data" / "usage.json").read_bytes())
    expected = truth_usage(tz)
    for kind in ("blocks", "days", "weeks", "months"):
        assert built[kind] == expected[kind], kind
    assert built == expected
    # The sums hold the whole corpus: every counted token is in exactly one window of each kind.
    corpus = json.loads((DEMO_EXPECTED / "corpus.json").read_bytes())
    for kind in ("blocks", "days", "weeks", "months"):
        assert {c: sum(w["tokens"][c] for w in built[kind]) for c in CATEGORIES} == corpus["tokens_total"]


def test_windows_carry_the_offset_of_their_zone(zoned_site: tuple[str, Path]) -> None:
    """Starts and ends are ISO 8601 with an explicit offset; days start at local midnight, blocks at a UTC hour."""
    tz, site = zoned_site
    built = json.loads((site / "data" / "usage.json").read_bytes())
    pattern = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
    for kind in ("blocks", "days", "weeks", "months"):
        for window in built[kind]:
            assert pattern.match(window["start"]) and pattern.match(window["end"]), window
    assert all(w["start"][11:19] == "00:00:00" for w in built["days"] + built["weeks"] + built["months"])
    assert all(datetime.fromisoformat(w["start"]).weekday() == 0 for w in built["weeks"])
    minutes = {datetime.fromisoformat(w["start"]).minute for w in built["blocks"]}
    assert minutes == ({30} if tz == "Asia/Kolkata" else {0})
    if tz == "America/New_York":
        offsets = {w["start"][-6:] for w in built["days"]}
        assert offsets == {"-04:00", "-05:00"}  # the demo's days fall on both sides of a DST change


def test_an_unpriced_session_counts_its_tokens_and_marks_the_cost_incomplete(zoned_site: tuple[str, Path]) -> None:
    """A window holding an unpriced session's requests says its cost leaves them out; the demo has such windows."""
    _, site = zoned_site
    built = json.loads((site / "data" / "usage.json").read_bytes())
    incomplete = [w for w in built["days"] if not w["cost_complete"]]
    assert incomplete
    assert any("claude-nimbus-9" in w["models"] for w in incomplete)


# -- the block rule ---------------------------------------------------------------------------------------------------------


def at(text: str) -> datetime:
    """Parse a UTC instant."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_block_starts_at_the_hour_of_its_first_request() -> None:
    """The first request at 10:55:30 opens the block at 10:00, which ends at 15:00."""
    assert block_starts([at("2025-01-01T10:55:30")]) == [at("2025-01-01T10:00:00")]


def test_a_request_at_the_block_end_stays_in_it_and_one_past_it_opens_the_next() -> None:
    """Exactly 5 h after the block's start is still inside it (ccusage's `>`); a millisecond later opens a block, floored again."""
    times = [at("2025-01-01T10:20:00"), at("2025-01-01T15:00:00"), at("2025-01-01T15:00:00.001")]
    assert block_starts(times) == [at("2025-01-01T10:00:00"), at("2025-01-01T10:00:00"), at("2025-01-01T15:00:00")]


def test_a_gap_over_five_hours_opens_a_block_at_the_hour_of_the_next_request() -> None:
    """After a gap the next block starts at its own first request's hour, not at the end of the last block."""
    times = [at("2025-01-01T10:00:00"), at("2025-01-01T16:40:00"), at("2025-01-01T20:59:00"), at("2025-01-01T21:00:00.001")]
    assert block_starts(times) == [at("2025-01-01T10:00:00"), at("2025-01-01T16:00:00"), at("2025-01-01T16:00:00"), at("2025-01-01T21:00:00")]


def request(when: str | None, session: str = "s1", model: str = "m", cost: str | None = "1") -> UsageRequest:
    """Return one request of 10 input tokens."""
    return UsageRequest(session, None if when is None else at(when), model, Tokens(input=10), None if cost is None else Decimal(cost))


def test_windows_of_a_dst_day_and_untimed_requests() -> None:
    """The day New York leaves DST lasts 25 h; a request without a time is in no window and counted apart."""
    usage = usage_windows([request("2025-11-02T12:00:00"), request(None), request("2025-11-02T13:00:00", "s2", "n", None)], "America/New_York")
    (day,) = usage.days
    assert (day.start.isoformat(), day.end.isoformat()) == ("2025-11-02T00:00:00-04:00", "2025-11-03T00:00:00-05:00")
    assert (day.tokens.input, day.cost, day.priced, day.requests, day.sessions, day.models) == (20, Decimal(1), 1, 2, 2, ["m", "n"])
    assert not day.cost_complete
    assert (usage.untimed_requests, usage.untimed_tokens.input) == (1, 10)
    (week,) = usage.weeks
    assert (week.start.isoformat(), week.end.isoformat()) == ("2025-10-27T00:00:00-04:00", "2025-11-03T00:00:00-05:00")


def test_a_day_whose_midnight_is_skipped_starts_when_it_begins() -> None:
    """Santiago's clocks went from 00:00 to 01:00 on 2024-09-08: that day starts at 01:00 local."""
    (day,) = usage_windows([request("2024-09-08T12:00:00")], "America/Santiago").days
    assert day.start.isoformat() == "2024-09-08T01:00:00-03:00"


# -- --tz, times on pages, and the index ---------------------------------------------------------------------------------


def test_an_unknown_zone_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--tz Mars/Olympus` (and `localtime`, which differs by machine) stops before any work with one line."""
    for name in ("Mars/Olympus", "localtime", "../etc/passwd"):
        code = main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--tz", name])
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and "--tz" in err, err
    assert not (tmp_path / "cache").exists()
    assert check_zone("Asia/Kolkata") == "Asia/Kolkata"


def test_short_time_shows_the_chosen_zone() -> None:
    """An instant is shown in the zone the build's pages use, and in UTC unless one is given."""
    assert short_time("2025-10-08T09:31:41.687Z", ZoneInfo("Asia/Kolkata")) == "2025-10-08 15:01"
    assert short_time("2025-10-08T09:31:41.687Z") == "2025-10-08 09:31"
    assert short_time(None, ZoneInfo("Asia/Kolkata")) == "—"
    # Shown in a zone west of UTC, the first minutes of year 1 would fall before it: shown as written.
    assert short_time("0001-01-01T00:10:00.000Z", ZoneInfo("America/New_York")) == "0001-01-01 00:10"


def parsed_and_formatted(instant: str) -> str:
    """short_time's rule spelled out: parse the instant, show it in UTC; as written when it does not parse."""
    try:
        moment = datetime.fromisoformat(instant)
    except ValueError:
        return f"{instant[:10]} {instant[11:16]}"
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M")


instant_parts = st.tuples(
    st.sampled_from(["2026", "1000", "9999", "0999", "0005"]) | st.text("0123456789", min_size=4, max_size=4),
    st.sampled_from(["01", "02", "12", "13", "00"]), st.sampled_from(["01", "28", "29", "30", "31", "32", "00"]),
    st.sampled_from(["00", "12", "23", "24", "99"]), st.sampled_from(["00", "07", "59", "60"]),
    st.sampled_from(["", ":00", ":59", ":60", ":05.123", ":05.1234567"]), st.sampled_from(["Z", "+00:00", "+05:30", "", "z"]),
)


@settings(max_examples=400, deadline=None)
@given(instant_parts)
def test_short_time_in_utc_shows_what_parsing_and_formatting_would(parts: tuple[str, ...]) -> None:
    # A UTC instant as transcripts write it is shown from its own digits: never other text than
    # parsing would give, for valid and invalid dates, leap seconds, years before 1000 and offsets.
    year, month, day, hour, minute, seconds, offset = parts
    instant = f"{year}-{month}-{day}T{hour}:{minute}{seconds}{offset}"
    assert short_time(instant) == parsed_and_formatted(instant)


@settings(max_examples=400, deadline=None)
@given(instant_parts, instant_parts)
def test_sort_keys_order_instants_as_time_does_and_leave_the_unknown_empty(first: tuple[str, ...], second: tuple[str, ...]) -> None:
    # A sortable column's key: what parses is ordered by the instant, whatever its offset; the rest is "".
    instants = ["{}-{}-{}T{}:{}{}{}".format(*parts) for parts in (first, second)]
    moments = []
    for instant in instants:
        try:
            moment = datetime.fromisoformat(instant)
            moments.append((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
        except ValueError:
            moments.append(None)
    keys = [epoch_ms(instant) for instant in instants]
    for key, moment in zip(keys, moments, strict=True):
        assert (key == "") == (moment is None)
    if None not in moments and moments[0] != moments[1]:
        assert (int(keys[0]) < int(keys[1])) == (moments[0] < moments[1])


def test_duration_keys_are_the_seconds_the_duration_shows() -> None:
    start = "2026-07-26T12:48:57.526Z"
    for end, shown, seconds in (("2026-07-26T18:37:01.000Z", "5h 48m", 20883), ("2026-07-26T12:49:02.000+00:00", "0m 04s", 4),
                                ("2026-07-26T12:00:00.000Z", "0m 00s", 0)):
        assert (duration(start, end), duration_seconds(start, end)) == (shown, str(seconds))
    assert (duration(start, None), duration_seconds(None, start), epoch_ms(None), epoch_ms("")) == ("—", "", "", "")
    assert epoch_ms("1970-01-01T00:00:01.5Z") == "1500" and epoch_ms("1970-01-01T02:00:00+02:00") == "0"


def test_every_page_states_the_zone_and_shows_times_in_it(zoned_site: tuple[str, Path]) -> None:
    """The footer of every page names the zone; a session's start on the index is shown in it."""
    tz, site = zoned_site
    pages = sorted(site.rglob("*.html"))
    assert pages
    for page in pages:
        assert f'Times are in <span class="tz">{tz}</span>.' in page.read_text(encoding="utf-8"), page
    index = (site / "index.html").read_text(encoding="utf-8")
    started = json.loads((site / "data" / "index.json").read_bytes())["sessions"][0]["started_at"]
    local = datetime.fromisoformat(started).astimezone(ZoneInfo(tz))
    # Its sort key is the instant, whatever the zone it is shown in.
    assert f'<td class="col-date" data-sort="{round(local.timestamp() * 1000)}">{local:%Y-%m-%d %H:%M}</td>' in index


def test_the_index_shows_bounded_tables_and_marks_the_busiest_block(zoned_site: tuple[str, Path]) -> None:
    """Daily, weekly and monthly tables, most recent first and bounded; one busiest bar, the block with the most tokens."""
    tz, site = zoned_site
    index = (site / "index.html").read_text(encoding="utf-8")
    built = json.loads((site / "data" / "usage.json").read_bytes())
    for kind, limit in TABLE_ROWS.items():
        table = re.search(rf'<table class="usage-table usage-{kind}">.*?</table>', index, re.S)
        assert table, kind
        rows = re.findall(r'<td class="col-date">([^<]*)</td>', table.group(0))
        assert len(rows) == min(limit, len(built[kind]))
        assert rows == sorted(rows, reverse=True)
        start = built[kind][-1]["start"]
        assert {"days": start[:10], "weeks": f"({start[5:10]} to", "months": start[:7]}[kind] in rows[0]
    chart = re.search(r'<svg class="chart blocks".*?</svg>', index, re.S)
    assert chart and "style=" not in chart.group(0) and "<script" not in chart.group(0)
    assert chart.group(0).count('class="bar busiest"') == 1
    busiest = max(built["blocks"], key=lambda w: sum(w["tokens"].values()))
    title = re.search(r'class="bar busiest"[^>]*><title>([^<]*)</title>', chart.group(0))
    assert title and f"{sum(busiest['tokens'].values()):,} tokens" in title.group(1)
    start = datetime.fromisoformat(busiest["start"])
    assert title.group(1).startswith(f"{start:%Y-%m-%d %H:%M}")


# -- incremental and deterministic ------------------------------------------------------------------------------------------


def test_a_no_change_build_writes_nothing_and_a_new_zone_rerenders(tmp_path: Path) -> None:
    """A second build writes nothing; another --tz rewrites usage.json and the pages; back again equals the first build."""
    from agenthropic_site.pipeline.build import run_build

    def config(tz: str) -> BuildConfig:
        return BuildConfig(corpus=DEMO_CORPUS, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant(DEMO_NOW), quiet=True, tz=tz)

    run_build(config("UTC"))
    first = (tmp_path / "site" / "data" / "usage.json").read_bytes()
    first_index = (tmp_path / "site" / "index.html").read_bytes()
    again = run_build(config("UTC"))
    assert again.pages_written == 0
    moved = run_build(config("Asia/Kolkata"))
    assert moved.pages_written > 2
    assert json.loads((tmp_path / "site" / "data" / "usage.json").read_bytes())["tz"] == "Asia/Kolkata"
    run_build(config("UTC"))
    assert (tmp_path / "site" / "data" / "usage.json").read_bytes() == first
    assert (tmp_path / "site" / "index.html").read_bytes() == first_index


def test_usage_bytes_are_the_same_from_two_fresh_caches(tmp_path: Path, zoned_site: tuple[str, Path]) -> None:
    """Another output and cache folder give the same data/usage.json and index."""
    tz, site = zoned_site
    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache", "--tz", tz) in (0, 1)
    for rel in ("data/usage.json", "index.html"):
        assert (tmp_path / "site" / rel).read_bytes() == (site / rel).read_bytes(), rel


def test_a_new_session_changes_only_the_windows_it_falls_in(demo_corpus: Path, tmp_path: Path) -> None:
    """Every other window of data/usage.json keeps its bytes; the new session's request is in one block, day, week and month."""
    from records import assistant, usage, user, write

    assert build(demo_corpus, tmp_path / "site", tmp_path / "cache") in (0, 1)
    before = json.loads((tmp_path / "site" / "data" / "usage.json").read_bytes())
    sid = "12345678-1234-4234-8234-123456789abc"
    when = "2026-03-04T09:30:00.000Z"  # a Wednesday; no demo request falls within 5 h of it
    write(demo_corpus / "-home-u-new" / f"{sid}.jsonl", user("n0", "one more", session=sid, ts=when),
          assistant("n1", "msg_new", "req_new", usage(100, 10), session=sid, ts=when))
    assert build(demo_corpus, tmp_path / "site", tmp_path / "cache") in (0, 1)
    after = json.loads((tmp_path / "site" / "data" / "usage.json").read_bytes())
    moment = datetime.fromisoformat(when.replace("Z", "+00:00"))
    for kind in ("blocks", "days", "weeks", "months"):
        covering = [w for w in after[kind] if datetime.fromisoformat(w["start"]) <= moment <= datetime.fromisoformat(w["end"])]
        assert len(covering) == 1 and covering[0]["tokens"]["input"] >= 100, kind
        assert [w for w in after[kind] if w is not covering[0]] == [w for w in before[kind] if w["start"] != covering[0]["start"]], kind


def test_an_append_counts_only_the_new_request_in_the_usage_windows(demo_corpus: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    settings = BuildConfig(corpus=demo_corpus, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant(DEMO_NOW), quiet=True)
    run_build(settings)
    decoded: list[tuple[str, int]] = []
    real_requests = usage_module._requests

    def counted(session_id: str, data: bytes) -> list[Any]:
        requests = real_requests(session_id, data)
        decoded.append((session_id, len(requests)))
        return requests

    monkeypatch.setattr(usage_module, "_requests", counted)
    main_file = next(demo_corpus.rglob(f"{SESSION}.jsonl"))
    reply = json.loads(next(line for line in reversed(main_file.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line))
    reply.update(timestamp="2030-01-01T00:00:00.000Z", uuid="appended", requestId="req_appended")
    reply["message"]["id"] = "msg_appended"
    with main_file.open("ab") as handle:  # one more request in one session, after every other of the corpus, as a live session appends
        handle.write(json.dumps(reply).encode() + b"\n")
    run_build(settings)
    # Only the grown session's new request is decoded; the windows are the last build's with it added.
    assert decoded == [(SESSION, 1)]
    # And what it reads is what a fresh process reads.
    usage_module._DECODED.clear()
    assert json.loads((tmp_path / "site" / "data" / "usage.json").read_bytes()) == _fresh_usage(demo_corpus, tmp_path)


def _fresh_usage(corpus: Path, tmp_path: Path) -> Any:
    run_build(BuildConfig(corpus=corpus, out=tmp_path / "fresh", cache=tmp_path / "fresh-cache", now=parse_instant(DEMO_NOW), quiet=True))
    return json.loads((tmp_path / "fresh" / "data" / "usage.json").read_bytes())


def _stored(points: list[tuple[str, list[Any]]]) -> list[tuple[str, bytes]]:
    """Each session's requests as a stored view keeps them (stored.encode_usage), by session id."""
    sessions: dict[str, list[list[Any]]] = {}
    for session_id, point in points:
        sessions.setdefault(session_id, []).append(point)
    return [(session_id, json.dumps(sessions[session_id], separators=(",", ":")).encode()) for session_id in sorted(sessions)]


def _sums(stored: list[tuple[str, bytes]]) -> list[tuple[str, str]]:
    """Each session's checksum of its stored requests, as the cache keeps one beside them."""
    return [(sid, hashlib.sha256(data).hexdigest()) for sid, data in stored]


def _reader(stored: list[tuple[str, bytes]], asked: list[str] | None = None) -> Any:
    """Read stored requests as the cache does (by session id, with their checksums), noting in `asked` which sessions were read."""
    def read(session_ids: list[str]) -> list[tuple[str, bytes, str]]:
        if asked is not None:
            asked.extend(session_ids)
        return [(sid, data, checksum) for (sid, data), (_, checksum) in zip(stored, _sums(stored)) if sid in session_ids]
    return read


def _summed(stored: list[tuple[str, bytes]], tz: str) -> tuple[Any, Any, dict[str, Any]]:
    usage, scan = usage_module.Usage(tz=tz), usage_module.BlockScan()
    usage_module.add_requests(usage, scan, [request for sid, data in stored for request in usage_module.decode(sid, data)])
    entries = {sid: [len(usage_module.decode(sid, data)), len(data), checksum, hashlib.sha256(data[:-1]).hexdigest()]
               for (sid, data), (_, checksum) in zip(stored, _sums(stored))}
    return usage, scan, entries


def _carry(state: str, stored: list[tuple[str, bytes]], tz: str, asked: list[str] | None = None) -> Any:
    return usage_module.carry(state, _sums(stored), _reader(stored, asked), tz)


def test_summing_everything_reads_every_session_once() -> None:
    point = ["2025-01-01T10:00:00.000Z", "m", 1, 1, 0, 0, 0, "1", "an-agent"]
    stored = _stored([("a", point), ("b", point), ("b", point)])
    asked: list[str] = []
    usage, _, entries = usage_module.sum_all(_sums(stored), _reader(stored, asked), "UTC")
    assert asked == ["a", "b"] and usage.untimed_requests == 0 and sum(window.requests for window in usage.days) == 3
    assert entries == _summed(stored, "UTC")[2]


def test_windows_carried_forward_equal_the_windows_summed_again() -> None:
    """A build after an append counts only the new requests; its windows must be those of summing everything again."""
    from random import Random

    from agenthropic_site.render.usage import usage_json

    rng = Random(18)
    carried_at_least = 0
    for _ in range(150):
        tz = rng.choice(["UTC", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"])
        sessions = [f"s{index}" for index in range(rng.randrange(1, 5))]
        unpriced = {session for session in sessions if rng.random() < 0.2}
        moment = datetime(2025, 3, 29, rng.randrange(24), tzinfo=UTC)
        points: list[tuple[str, list[Any]]] = []
        for _ in range(rng.randrange(1, 40)):
            # Gaps around the rules' edges: the same instant, minutes, exactly five hours, more, days.
            moment += rng.choice([timedelta(0), timedelta(minutes=rng.randrange(1, 50)), timedelta(hours=5), timedelta(hours=5, milliseconds=1),
                                  timedelta(hours=rng.randrange(1, 30))])
            session = rng.choice(sessions)
            at = None if rng.random() < 0.05 else moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
            cost = None if session in unpriced else str(Decimal(rng.randrange(1, 10_000)) / 10_000)
            points.append((session, [at, rng.choice(["m1", "m2"]), *(rng.randrange(100) for _ in range(5)), cost, session]))
        cut = rng.randrange(0, len(points) + 1)
        before, after = _stored(points[:cut]), _stored(points)
        usage, scan, entries = _summed(before, tz)
        asked: list[str] = []
        carried = _carry(usage_module.state_of(usage, scan, entries), after, tz, asked)
        whole = _summed(after, tz)[0]
        # Untimed requests sort first in a stored view, so one added after others is not an append; nor is a new
        # untimed one: then everything is summed again, which is right too.
        if carried is not None:
            carried_at_least += 1
            assert usage_json(carried[0]) == usage_json(whole)
            assert carried[2] == _summed(after, tz)[2]
            # Only the sessions whose requests changed were read.
            assert asked == [sid for sid, data in after if (sid, data) not in before]
    assert carried_at_least > 50


def test_windows_are_summed_again_when_the_corpus_did_not_only_grow() -> None:
    point = lambda at, cost="1": ["2025-01-01T" + at + ".000Z", "m", 1, 1, 0, 0, 0, cost, "an-agent"]  # noqa: E731
    before = _stored([("a", point("10:00:00")), ("b", point("11:00:00"))])
    state = usage_module.state_of(*_summed(before, "UTC"))
    assert _carry(state, _stored([("a", point("10:00:00")), ("b", point("11:00:00")), ("b", point("12:00:00"))]), "UTC") is not None
    for name, changed in {
        "a session gone": _stored([("a", point("10:00:00"))]),
        "a request changed": _stored([("a", point("10:00:00", "2")), ("b", point("11:00:00"))]),
        "a request earlier than the last counted": _stored([("a", point("10:00:00")), ("a", point("10:30:00")), ("b", point("11:00:00"))]),
    }.items():
        assert _carry(state, changed, "UTC") is None, name
    assert _carry(state, before, "Europe/Paris") is None
    assert _carry("not json", before, "UTC") is None


COUNTS = st.integers(min_value=0, max_value=10**12)
TOKENS = st.builds(Tokens, COUNTS, COUNTS, COUNTS, COUNTS, COUNTS)


@given(st.lists(TOKENS, max_size=30))
def test_tokens_summed_at_once_equal_tokens_added_one_by_one(many: list[Tokens]) -> None:
    added = Tokens()
    for tokens in many:
        added = added + tokens
    assert Tokens.sum_of(many) == added
    assert Tokens.sum_of(iter(many)) == added  # a generator is read once


@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=len(CATEGORIES), max_size=len(CATEGORIES)))
def test_a_windows_totals_are_those_of_its_tokens(counts: list[int]) -> None:
    window = Window(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 5, tzinfo=UTC), counts=counts)
    assert window.total_tokens == window.tokens.total
    assert window.tokens_by_category() == window.tokens.as_dict()
    assert list(window.tokens_by_category()) == list(CATEGORIES)
