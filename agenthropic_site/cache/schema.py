"""The SQLite cache schema; a cache of another version is deleted and rebuilt, never migrated.

Every stored row carries a checksum (`*_sum` columns, `row_sums` for what a session's transcripts
said), so that damage to the file is found when the row is read and the row derived again.
"""

SCHEMA_VERSION = 27  # 27: files' ctime beside size, mtime and inode (parsed_files, flat_owners, scan_checkpoints);
# 26: each body piece its own checksum (transcript_pieces.piece_sum), chained into the body's;
# 25: long lists of a scan checkpoint in chunks (checkpoint_chunks), a view's requests kept once (views.usage);
# 24: small sidecars' bytes kept (parsed_files.sidecar);
# 23: hook events of impossible times refused (a cache that stored one is rebuilt, its spool read again);
# 22: each stored message's digest (transcripts.digests); 21: row digests by orjson (store.rows_digest), not repr

STATUS_CHECK = "status IN ('working','waiting','completed','error','unknown')"

SCHEMA = f"""
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    value_sum TEXT
);
CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    -- What the session was parsed from: the digest of its files' bytes (parsed_files), else their
    -- fingerprint; its view holds it, so any change to what was parsed renders its pages again.
    source TEXT NOT NULL,
    title TEXT,
    title_source TEXT,
    cwd TEXT,
    git_branch TEXT,
    versions TEXT NOT NULL,
    started_at TEXT,
    ended_at TEXT,
    main_ended_at TEXT,
    details TEXT NOT NULL
);
CREATE TABLE agents (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    parent_agent_id TEXT,
    kind TEXT NOT NULL,
    edge_source TEXT,
    agent_type TEXT,
    description TEXT,
    file TEXT,
    status TEXT NOT NULL CHECK ({STATUS_CHECK}),
    outcome_cause TEXT,
    notification_status TEXT,
    spawn_tool_use_id TEXT,
    first_seen_at TEXT,
    last_seen_at TEXT,
    has_transcript INTEGER NOT NULL,
    reported TEXT,
    PRIMARY KEY (session_id, agent_id),
    FOREIGN KEY (session_id, parent_agent_id) REFERENCES agents(session_id, agent_id)
);
-- Deleting an agent looks for the agents that name it as their parent (the foreign key): without
-- this index each deletion read every agent of the cache (an 800-agent session's rows: 54 -> 2 ms).
CREATE INDEX agents_parent ON agents(session_id, parent_agent_id);
-- The agents without an ending, by their last activity: what the watchdog asks of every build that
-- renders (which agents it shows as unknown at this clock, and when that changes next). A scan of
-- every agent took 5.1 ms of a one-append build at 500 sessions, the index 1.3 ms.
CREATE INDEX agents_open ON agents(last_seen_at) WHERE status NOT IN ('completed', 'error');
CREATE TABLE orchestration_edges (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    parent TEXT NOT NULL,
    child TEXT NOT NULL,
    source TEXT NOT NULL,
    instance INTEGER NOT NULL DEFAULT 0,
    host_id TEXT,
    tool_use_id TEXT,
    UNIQUE (session_id, parent, child)
);
CREATE TABLE token_usage (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    message_id TEXT,
    request_id TEXT,
    model TEXT NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write_5m INTEGER NOT NULL,
    cache_write_1h INTEGER NOT NULL,
    family TEXT,
    cost TEXT,
    cost_input TEXT,
    cost_output TEXT,
    cost_cache_read TEXT,
    cost_cache_write_5m TEXT,
    cost_cache_write_1h TEXT,
    price_problem TEXT,
    segment INTEGER NOT NULL DEFAULT 0,
    at TEXT,
    speed TEXT,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    under_reported INTEGER NOT NULL,
    origin_session TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE compactions (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    uuid TEXT,
    at TEXT,
    trigger TEXT,
    pre_tokens INTEGER,
    post_tokens INTEGER,
    compaction_agent_id TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE transcripts (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    -- Over the body and the digests: a damaged byte in either is found when the transcript is read.
    body_sum TEXT NOT NULL,
    -- Each message's digest (16 bytes, in order; store.message_digest): the pages key a message's
    -- HTML by it, so an append does not serialise and hash every stored message again.
    digests BLOB NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
-- A transcript's body (the JSON list of its message rows) in pieces of BODY_PIECE bytes, in order:
-- an append rewrites the pieces from the one it changes on, not the whole body (an 11.7 MB main
-- transcript was written again whole, 0.15 s of each append to it). Each piece has its checksum
-- (over its index and bytes), and `transcripts.body_sum` is over those in order: an append reads
-- and checks the piece it changes, not the 11.7 MB before it. The checksum sits before the bytes:
-- the checksums are read without walking the pieces' overflow pages.
CREATE TABLE transcript_pieces (
    session_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    piece INTEGER NOT NULL,
    piece_sum TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (session_id, agent_id, piece),
    FOREIGN KEY (session_id, agent_id) REFERENCES transcripts(session_id, agent_id) ON DELETE CASCADE
);
-- The session's files as the walk saw them when it was last parsed: their fingerprint (paths,
-- sizes, times, inodes) and their shape (paths and sizes only).
CREATE TABLE ingest_checkpoints (
    session_id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    shape TEXT NOT NULL,
    row_sum TEXT NOT NULL
);
-- Each file the last parse of a session read whole at the size the walk saw, with its lstat then
-- and the digest of its bytes (pipeline/parsing.py file_digest). Files with a new fingerprint but
-- the same shape (a copied or restored corpus, a touched file) are compared by these digests, the
-- files whose lstat changed read again: when every one holds the bytes parsed, the session is
-- taken as it is, and only its fingerprint and these lstats are written again. A small sidecar
-- (an agent's .meta.json) keeps its bytes: the next parse of the session takes them while the
-- file's lstat is this one, and opens only the files that changed (pipeline/parsing.py).
CREATE TABLE parsed_files (
    session_id TEXT NOT NULL,
    rel TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL,
    sidecar BLOB,
    row_sum TEXT NOT NULL,
    PRIMARY KEY (session_id, rel)
);
CREATE TABLE ingest_failures (
    session_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    reason TEXT NOT NULL,
    consecutive INTEGER NOT NULL,
    retry_at_build INTEGER NOT NULL DEFAULT 0,
    row_sum TEXT NOT NULL
);
CREATE TABLE flat_owners (
    rel TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    session_id TEXT,
    row_sum TEXT NOT NULL
);
CREATE TABLE views (
    session_id TEXT PRIMARY KEY REFERENCES sessions(session_id) ON DELETE CASCADE,
    -- The small columns first and the body (tens of KB) last: SQLite reaches a column by walking
    -- the row's overflow pages before it, so a build reads every summary and checksum without
    -- touching the bodies (500 summaries: 5 -> 2 ms; the usage checksums alone 6 -> 1 ms).
    excluded INTEGER NOT NULL,
    body_sum TEXT NOT NULL,
    summary_sum TEXT NOT NULL,
    row_sum TEXT NOT NULL,
    usage_sum TEXT NOT NULL,
    summary BLOB NOT NULL,
    -- Every request the session owns (time, model, tokens, cost), for the usage windows: stored with
    -- the view, so it goes whenever the view does (model/usage.py reads only these).
    usage BLOB NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE events_raw (
    seq INTEGER PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    received_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TRIGGER events_raw_append_only_update BEFORE UPDATE ON events_raw
BEGIN SELECT RAISE(ABORT, 'events_raw is append-only'); END;
CREATE TRIGGER events_raw_append_only_delete BEFORE DELETE ON events_raw
BEGIN SELECT RAISE(ABORT, 'events_raw is append-only'); END;
CREATE TABLE events (
    raw_seq INTEGER PRIMARY KEY REFERENCES events_raw(seq),
    session_id TEXT,
    agent_id TEXT,
    event TEXT,
    at TEXT NOT NULL
);
CREATE INDEX events_session ON events(session_id, at);
CREATE TABLE svg_cache (
    digest TEXT PRIMARY KEY,
    svg BLOB NOT NULL,
    svg_sum TEXT NOT NULL
);
-- Each transcript's scan checkpoint (parse/checkpoint.py), for sessions big enough to keep them:
-- the file as it was read (its size, mtime, inode and ctime when the read matched the walk; the bytes
-- scanned and their digest) and the stored transcript the state goes with (its checksum, its
-- length, where its last message starts). A memo: never sealed with the session's rows, replaced
-- where they changed when the session is written, each checked before use (pipeline/parsing.py).
CREATE TABLE scan_checkpoints (
    session_id TEXT NOT NULL,
    rel TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    size INTEGER,
    mtime_ns INTEGER,
    inode INTEGER,
    ctime_ns INTEGER,
    scanned INTEGER NOT NULL,
    scanned_digest TEXT NOT NULL,
    body_sum TEXT NOT NULL,
    body_len INTEGER NOT NULL,
    body_last INTEGER NOT NULL,
    state BLOB NOT NULL,
    row_sum TEXT NOT NULL,
    PRIMARY KEY (session_id, rel)
);
-- The chunks of the long lists a scan checkpoint holds (parse/checkpoint.py), under the digest of
-- their bytes (their checksum: one whose bytes do not match it is not used), with the checkpoint's
-- path: an append writes the new chunks and deletes those no longer named, and keeps the others.
CREATE TABLE checkpoint_chunks (
    session_id TEXT NOT NULL,
    rel TEXT NOT NULL,
    digest TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (session_id, rel, digest)
);
-- The last layout of each transcript: every message's key and HTML size (render/reader.py
-- pack_sizes), so the next build renders only messages whose key is new; under agent id '', the
-- session's search shard parts (render/pages.py SEARCH_PARTS); under '.', the digest of its graph's
-- DOT source (GRAPH: svg_cache keeps only the graphs these name). A memo: never sealed
-- with the session's rows, and kept when the session is written again (its keys say what is stale).
CREATE TABLE layouts (
    session_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    sizes BLOB NOT NULL,
    sizes_sum TEXT NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
-- The digest of each session's rows in each table that holds what its transcripts said,
-- written with them (Cache.write_session, set_prices, apply_event) and checked before use.
CREATE TABLE row_sums (
    session_id TEXT NOT NULL,
    tbl TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (session_id, tbl)
);
"""

# Requests by their ids (a request shared with another session: store.py `shared_requests`). A new
# cache file gets them once its first ingest has written its rows (Cache.index_request_ids): a cold
# build's rows land at random places in them, and the commits of 500 sessions took 1.1 s with them
# there, 0.4 s without them and 0.04 s more to make them at the end.
REQUEST_ID_INDEXES = """
CREATE INDEX IF NOT EXISTS token_usage_message ON token_usage(message_id);
CREATE INDEX IF NOT EXISTS token_usage_request ON token_usage(request_id);
"""
