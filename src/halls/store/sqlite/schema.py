"""SQLite migrations: plain numbered functions, applied in order once each.

``PRAGMA user_version`` holds the number of the last one applied. A new
migration is appended; an applied one is never edited.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def m001_initial() -> str:
    return """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE short (
            id TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            topic TEXT,
            source TEXT,
            pinned INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            occurred_at REAL NOT NULL,
            expires_at REAL
        );

        CREATE TABLE near (
            id TEXT PRIMARY KEY,
            intent TEXT NOT NULL,
            topic TEXT,
            trigger_type TEXT NOT NULL,
            trigger_value TEXT,
            expires_at REAL,
            status TEXT NOT NULL,
            closed_at REAL,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            occurred_at REAL NOT NULL
        );
        CREATE INDEX near_status ON near(status);

        CREATE TABLE long (
            id TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            topic TEXT,
            category TEXT,
            evidence_count INTEGER NOT NULL,
            first_seen REAL NOT NULL,
            last_confirmed REAL NOT NULL,
            status TEXT NOT NULL,
            supersedes TEXT,
            superseded_by TEXT,
            derived_from TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            occurred_at REAL NOT NULL
        );
        CREATE INDEX long_status ON long(status);

        CREATE TABLE journal (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            role TEXT,
            session_id TEXT,
            redactions INTEGER NOT NULL DEFAULT 0,
            topic TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            occurred_at REAL NOT NULL
        );

        CREATE TABLE briefs (
            id TEXT PRIMARY KEY,
            summary TEXT NOT NULL,
            promote_hints TEXT NOT NULL,
            completed_intents TEXT NOT NULL,
            created_at REAL NOT NULL
        );

        CREATE TABLE forget_flags (
            id TEXT PRIMARY KEY,
            fact_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at REAL NOT NULL
        );

        -- The search index over the searchable tiers: one row per record, with
        -- the columns filters need, its vector, and (by rowid) its FTS5 row.
        -- active = visible by default (open loops; active or demoted facts).
        CREATE TABLE docs (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,
            item_id TEXT NOT NULL UNIQUE,
            tier TEXT NOT NULL,
            topic TEXT,
            occurred_at REAL NOT NULL,
            active INTEGER NOT NULL,
            vec BLOB NOT NULL
        );
        CREATE INDEX docs_topic ON docs(topic);
        CREATE INDEX docs_occurred ON docs(occurred_at);

        -- porter: "prefers" finds "preference"'s stem family; remove_diacritics
        -- lets "cafe" find "café".
        CREATE VIRTUAL TABLE docs_fts USING fts5(
            content, tokenize = 'porter unicode61 remove_diacritics 2'
        );

        -- Bumped on any deletion or re-embedding so that every process's
        -- in-memory vector index knows to reload.
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO counters VALUES ('vec_generation', 0);
        CREATE TRIGGER docs_deleted AFTER DELETE ON docs BEGIN
            UPDATE counters SET value = value + 1 WHERE name = 'vec_generation';
            DELETE FROM docs_fts WHERE rowid = old.rowid;
        END;
    """


def m002_consolidation() -> str:
    return """
        -- The fact a short-term entry was consolidated into: it is not counted
        -- again as evidence, and it leaves default search (the fact speaks).
        ALTER TABLE short ADD COLUMN consolidated_into TEXT;
        ALTER TABLE briefs ADD COLUMN noise TEXT NOT NULL DEFAULT '[]';
        CREATE INDEX briefs_created ON briefs(created_at);
        CREATE INDEX journal_created ON journal(created_at);

        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            started_at REAL NOT NULL,
            finished_at REAL,
            engine TEXT NOT NULL,
            status TEXT NOT NULL,
            since REAL,
            counts TEXT NOT NULL DEFAULT '{}',
            notes TEXT NOT NULL DEFAULT '[]',
            error TEXT,
            reverted_at REAL
        );
        -- before/after: the snapshots a reviewer sees; undo: what revert needs.
        CREATE TABLE run_actions (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            target_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            inputs TEXT NOT NULL DEFAULT '[]',
            before TEXT,
            after TEXT,
            engine_note TEXT,
            undo TEXT,
            PRIMARY KEY (run_id, seq)
        );
        CREATE INDEX run_actions_target ON run_actions(target_id);

        -- Association edges (derived_from, supersedes, ...), src -> dst.
        CREATE TABLE edges (
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            kind TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at REAL NOT NULL,
            PRIMARY KEY (src, dst, kind)
        );
        CREATE INDEX edges_dst ON edges(dst);
    """


def m003_vocabulary() -> str:
    return """
        -- Per indexed token, how many rows hold it (the doc column): what
        -- term_counts reads instead of counting each posting list. A view of
        -- the FTS5 index, so it stores nothing and needs no upkeep.
        CREATE VIRTUAL TABLE docs_vocab USING fts5vocab(docs_fts, 'row');
    """


def m004_deletions() -> str:
    return """
        -- Which search rows were deleted, in order: the in-memory indexes
        -- read what is new here and drop those rows from their view,
        -- instead of reloading the store (vec_generation, re-embedding,
        -- still forces a reload). The oldest entries are trimmed; an index
        -- that last looked before the oldest one kept reloads.
        CREATE TABLE deleted_rows (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            row INTEGER NOT NULL
        );
        DROP TRIGGER docs_deleted;
        CREATE TRIGGER docs_deleted AFTER DELETE ON docs BEGIN
            INSERT INTO deleted_rows(row) VALUES (old.rowid);
            DELETE FROM deleted_rows
                WHERE seq <= (SELECT MAX(seq) FROM deleted_rows) - 100000;
            DELETE FROM docs_fts WHERE rowid = old.rowid;
        END;
    """


def m005_edges_are_the_sources() -> str:
    return """
        -- A fact's sources were kept twice (long.derived_from and the edges)
        -- and the copies drifted: a reverted confirm left extra edges, an
        -- age-out left edges to deleted rows. The edges become the one truth.
        -- Their times were SQLite's Julian days; every other time is unix
        -- seconds from the service's clock.
        UPDATE edges SET created_at = (created_at - 2440587.5) * 86400.0
            WHERE created_at < 100000000;
        DELETE FROM edges WHERE kind = 'derived_from' AND NOT EXISTS (
            SELECT 1 FROM long l, json_each(l.derived_from) j
            WHERE l.id = edges.src AND j.value = edges.dst
        );
        INSERT OR IGNORE INTO edges(src, dst, kind, created_at)
            SELECT l.id, j.value, 'derived_from', l.created_at
            FROM long l, json_each(l.derived_from) j ORDER BY l.id, j.key;
        DELETE FROM edges WHERE src NOT IN (SELECT id FROM long UNION ALL SELECT id FROM short
                UNION ALL SELECT id FROM near UNION ALL SELECT id FROM journal)
            OR dst NOT IN (SELECT id FROM long UNION ALL SELECT id FROM short
                UNION ALL SELECT id FROM near UNION ALL SELECT id FROM journal);
        ALTER TABLE long DROP COLUMN derived_from;
        -- Supersession is the facts' own supersedes link; edges() reads it
        -- from there (by this index) instead of from a copy in edges.
        DELETE FROM edges WHERE kind = 'supersedes';
        CREATE INDEX long_supersedes ON long(supersedes);
    """


def m_retention() -> str:
    return """
        -- How often and how lately each searchable record was recalled (its
        -- strength decays from there), kept on its search row so that
        -- deleting the record deletes them. A long-term fact can be pinned.
        ALTER TABLE docs ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE docs ADD COLUMN last_accessed REAL;
        ALTER TABLE long ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX long_category ON long(category);
    """


def m007_edges_by_destination_and_kind() -> str:
    return """
        -- Association spreading reads "the first n edges of this kind into
        -- this node" (Store.adjacent). With dst alone indexed, asking a name
        -- shared by 10,000 memories for its derived_from edges visited all
        -- 10,000 rows to find none; with the kind beside it, none.
        DROP INDEX edges_dst;
        CREATE INDEX edges_dst ON edges(dst, kind);
    """


def m008_flag_authority() -> str:
    return """
        -- Who flagged a fact, and whether they may delete for good: only an
        -- admin's flag purges. A flag from before was anyone's: not an admin's.
        ALTER TABLE forget_flags ADD COLUMN flagged_by TEXT;
        ALTER TABLE forget_flags ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
    """


def m009_journal_search() -> str:
    return """
        -- Who may see an event in search results (full, summary, private),
        -- and the journal's own full-text index: apart from docs_fts, so its
        -- raw turns count in none of the other tiers' BM25 statistics. Its
        -- rowid is the event's seq; a private event has no row in it.
        ALTER TABLE journal ADD COLUMN visibility TEXT NOT NULL DEFAULT 'full';
        CREATE VIRTUAL TABLE journal_fts USING fts5(
            content, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO journal_fts(rowid, content) SELECT seq, content FROM journal;
        CREATE TRIGGER journal_deleted AFTER DELETE ON journal BEGIN
            DELETE FROM journal_fts WHERE rowid = old.seq;
        END;
    """


def m010_importance() -> str:
    return """
        -- How much a memory matters, as its writer said (halls.importance):
        -- a number in [0, 1], NULL when unset (ranked and aged as before).
        ALTER TABLE short ADD COLUMN importance REAL;
        ALTER TABLE near ADD COLUMN importance REAL;
        ALTER TABLE long ADD COLUMN importance REAL;
    """


def m011_scopes() -> str:
    return """
        -- The work scope each record was written for (halls.scopes), NULL for
        -- none; and the scopes themselves, opened and closed by the turns
        -- that write for them (the store's turn count is meta 'scope_turn').
        ALTER TABLE short ADD COLUMN scope TEXT;
        ALTER TABLE near ADD COLUMN scope TEXT;
        ALTER TABLE long ADD COLUMN scope TEXT;
        ALTER TABLE journal ADD COLUMN scope TEXT;
        CREATE TABLE scopes (
            name TEXT PRIMARY KEY,
            status TEXT NOT NULL,
            opened_at REAL NOT NULL,
            closed_at REAL,
            closed_because TEXT,
            turns INTEGER NOT NULL,
            last_turn INTEGER NOT NULL,
            elsewhere INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX scopes_status ON scopes(status, last_turn);
    """


MIGRATIONS: list[Callable[[], str]] = [
    m001_initial,
    m002_consolidation,
    m003_vocabulary,
    m004_deletions,
    m005_edges_are_the_sources,
    m_retention,
    m007_edges_by_destination_and_kind,
    m008_flag_authority,
    m009_journal_search,
    m010_importance,
    m011_scopes,
]


def migrate(db: sqlite3.Connection) -> None:
    """Apply pending migrations, each in its own transaction."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        # executescript commits any open transaction first, so the
        # transaction is spelled inside the script itself.
        try:
            db.executescript(
                f"BEGIN IMMEDIATE;\n{step()}\nPRAGMA user_version = {number};\nCOMMIT;"
            )
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
