"""PostgreSQL migrations: plain numbered functions, applied in order once each.

Every table lives in the ``halls`` schema of the database the DSN names,
and every row carries ``store`` (the id of its named store in ``stores``):
one database holds every store, and every statement a store runs names its
own id, so that no store reads or changes another's rows.
``halls.migrations`` records each migration applied; a new migration is
appended, an applied one never edited. Two processes starting at once
serialise on an advisory lock, so each migration runs once.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

# The advisory-lock namespace of halls (the first key of the two-key form):
# 0x68616c6c is "hall". The second key is a store's id, or 0 for migrations.
LOCK_SPACE = 0x68616C6C


def m001_initial() -> str:
    return """
        CREATE TABLE halls.stores (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            -- The write sequence: the last seq given to a search row. Taken
            -- under this row's lock by every transaction that writes search
            -- rows, so seqs become visible in order (the in-memory indexes
            -- of every process read "rows after the last seq I saw").
            last_seq bigint NOT NULL DEFAULT 0,
            -- The last entry of this store's deletion log (deleted_rows).
            last_deleted bigint NOT NULL DEFAULT 0,
            -- Bumped by re-embedding: every mirror reloads its vectors.
            vec_generation bigint NOT NULL DEFAULT 0
        );

        CREATE TABLE halls.meta (
            store integer NOT NULL, key text NOT NULL, value text NOT NULL,
            PRIMARY KEY (store, key)
        );

        CREATE TABLE halls.short (
            store integer NOT NULL,
            id text NOT NULL,
            content text NOT NULL,
            topic text,
            source text,
            pinned boolean NOT NULL DEFAULT false,
            metadata text NOT NULL DEFAULT '{}',
            created_at double precision NOT NULL,
            occurred_at double precision NOT NULL,
            expires_at double precision,
            consolidated_into text,
            PRIMARY KEY (store, id)
        );

        CREATE TABLE halls.near (
            store integer NOT NULL,
            id text NOT NULL,
            intent text NOT NULL,
            topic text,
            trigger_type text NOT NULL,
            trigger_value text,
            expires_at double precision,
            status text NOT NULL,
            closed_at double precision,
            metadata text NOT NULL DEFAULT '{}',
            created_at double precision NOT NULL,
            occurred_at double precision NOT NULL,
            PRIMARY KEY (store, id)
        );

        CREATE TABLE halls.long (
            store integer NOT NULL,
            id text NOT NULL,
            content text NOT NULL,
            topic text,
            category text,
            evidence_count integer NOT NULL,
            first_seen double precision NOT NULL,
            last_confirmed double precision NOT NULL,
            status text NOT NULL,
            supersedes text,
            superseded_by text,
            metadata text NOT NULL DEFAULT '{}',
            created_at double precision NOT NULL,
            occurred_at double precision NOT NULL,
            PRIMARY KEY (store, id)
        );
        CREATE INDEX long_status ON halls.long (store, status);
        CREATE INDEX long_supersedes ON halls.long (store, supersedes);

        CREATE TABLE halls.journal (
            store integer NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            content text NOT NULL,
            role text,
            session_id text,
            redactions integer NOT NULL DEFAULT 0,
            topic text,
            metadata text NOT NULL DEFAULT '{}',
            created_at double precision NOT NULL,
            occurred_at double precision NOT NULL,
            PRIMARY KEY (store, id)
        );
        CREATE INDEX journal_seq ON halls.journal (store, seq);
        CREATE INDEX journal_created ON halls.journal (store, created_at);

        CREATE TABLE halls.briefs (
            store integer NOT NULL,
            id text NOT NULL,
            summary text NOT NULL,
            promote_hints text NOT NULL,
            completed_intents text NOT NULL,
            created_at double precision NOT NULL,
            noise text NOT NULL DEFAULT '[]',
            PRIMARY KEY (store, id)
        );
        CREATE INDEX briefs_created ON halls.briefs (store, created_at);

        CREATE TABLE halls.forget_flags (
            store integer NOT NULL,
            id text NOT NULL,
            fact_id text NOT NULL,
            reason text NOT NULL,
            status text NOT NULL,
            created_at double precision NOT NULL,
            PRIMARY KEY (store, id)
        );

        CREATE TABLE halls.runs (
            store integer NOT NULL,
            id text NOT NULL,
            started_at double precision NOT NULL,
            finished_at double precision,
            engine text NOT NULL,
            status text NOT NULL,
            since double precision,
            counts text NOT NULL DEFAULT '{}',
            notes text NOT NULL DEFAULT '[]',
            error text,
            reverted_at double precision,
            PRIMARY KEY (store, id)
        );
        CREATE TABLE halls.run_actions (
            store integer NOT NULL,
            run_id text NOT NULL,
            seq integer NOT NULL,
            kind text NOT NULL,
            target_id text NOT NULL,
            reason text NOT NULL,
            inputs text NOT NULL DEFAULT '[]',
            before text,
            after text,
            engine_note text,
            undo text,
            PRIMARY KEY (store, run_id, seq)
        );

        -- Association edges, src -> dst; n orders edges made in one instant.
        CREATE TABLE halls.edges (
            store integer NOT NULL,
            src text NOT NULL,
            dst text NOT NULL,
            kind text NOT NULL,
            weight double precision NOT NULL DEFAULT 1.0,
            created_at double precision NOT NULL,
            n bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (store, src, dst, kind)
        );
        CREATE INDEX edges_dst ON halls.edges (store, dst);

        -- The search rows of the searchable tiers: one per record, with the
        -- columns filters need, its text and its vector (pgvector). seq is the
        -- store's write sequence (stores.last_seq), never reused.
        CREATE TABLE halls.docs (
            store integer NOT NULL,
            seq bigint NOT NULL,
            item_id text NOT NULL,
            tier text NOT NULL,
            topic text,
            occurred_at double precision NOT NULL,
            active boolean NOT NULL,
            content text NOT NULL,
            vec vector NOT NULL,
            PRIMARY KEY (store, seq),
            UNIQUE (store, item_id)
        );
        CREATE INDEX docs_topic ON halls.docs (store, topic);
        CREATE INDEX docs_occurred ON halls.docs (store, occurred_at);

        -- Which search rows were deleted, in order (stores.last_deleted): the
        -- in-memory indexes drop those rows instead of reloading the store.
        CREATE TABLE halls.deleted_rows (
            store integer NOT NULL,
            seq bigint NOT NULL,
            row bigint NOT NULL,
            PRIMARY KEY (store, seq)
        );
    """


def m002_retention() -> str:
    return """
        -- How often and how lately each searchable record was recalled (its
        -- strength decays from there), kept on its search row so that
        -- deleting the record deletes them. A long-term fact can be pinned,
        -- and facts are listed and searched by category.
        ALTER TABLE halls.docs
            ADD COLUMN access_count integer NOT NULL DEFAULT 0,
            ADD COLUMN last_accessed double precision;
        ALTER TABLE halls.long ADD COLUMN pinned boolean NOT NULL DEFAULT false;
        CREATE INDEX long_category ON halls.long (store, category);
    """


def m003_edges_by_destination_and_kind() -> str:
    return """
        -- Association spreading reads "the first n edges of this kind into
        -- this node" (Store.adjacent): with the kind beside dst in the index,
        -- a name shared by many memories is answered without visiting them.
        DROP INDEX halls.edges_dst;
        CREATE INDEX edges_dst ON halls.edges (store, dst, kind);
    """


def m004_flag_authority() -> str:
    return """
        -- Who flagged a fact, and whether they may delete for good: only an
        -- admin's flag purges. A flag from before was anyone's: not an admin's.
        ALTER TABLE halls.forget_flags
            ADD COLUMN flagged_by text,
            ADD COLUMN admin boolean NOT NULL DEFAULT false;
    """


def m005_journal_search() -> str:
    return """
        -- Who may see an event in search results (full, summary, private),
        -- and its tokens as FTS5 indexes them (store.postgres.journal): the
        -- journal's own full-text index, apart from the searchable tiers'.
        -- NULL: not tokenised yet (an event from before); empty: private.
        ALTER TABLE halls.journal
            ADD COLUMN visibility text NOT NULL DEFAULT 'full',
            ADD COLUMN tokens text[];
        CREATE INDEX journal_tokens ON halls.journal USING gin (tokens);
        CREATE INDEX journal_untokenised ON halls.journal (store) WHERE tokens IS NULL;
    """


def m006_importance() -> str:
    return """
        -- How much a memory matters, as its writer said (halls.importance):
        -- a number in [0, 1], NULL when unset (ranked and aged as before).
        ALTER TABLE halls.short ADD COLUMN importance double precision;
        ALTER TABLE halls.near ADD COLUMN importance double precision;
        ALTER TABLE halls.long ADD COLUMN importance double precision;
    """


def m007_scopes() -> str:
    return """
        -- The work scope each record was written for (halls.scopes), NULL for
        -- none; and the scopes themselves, opened and closed by the turns
        -- that write for them (a store's turn count is meta 'scope_turn').
        ALTER TABLE halls.short ADD COLUMN scope text;
        ALTER TABLE halls.near ADD COLUMN scope text;
        ALTER TABLE halls.long ADD COLUMN scope text;
        ALTER TABLE halls.journal ADD COLUMN scope text;
        CREATE TABLE halls.scopes (
            store integer NOT NULL,
            name text NOT NULL,
            status text NOT NULL,
            opened_at double precision NOT NULL,
            closed_at double precision,
            closed_because text,
            turns integer NOT NULL,
            last_turn bigint NOT NULL,
            elsewhere integer NOT NULL DEFAULT 0,
            PRIMARY KEY (store, name)
        );
        CREATE INDEX scopes_status ON halls.scopes (store, status, last_turn);
    """


MIGRATIONS: list[Callable[[], str]] = [
    m001_initial,
    m002_retention,
    m003_edges_by_destination_and_kind,
    m004_flag_authority,
    m005_journal_search,
    m006_importance,
    m007_scopes,
]


def migrate(dsn: str) -> None:
    """Apply pending migrations, each in its own transaction, once across processes."""
    with psycopg.connect(dsn, autocommit=True) as db:
        # Everything under one advisory lock: CREATE ... IF NOT EXISTS is not
        # safe against a second process doing the same at the same moment.
        db.execute("SELECT pg_advisory_lock(%s, 0)", (LOCK_SPACE,))
        try:
            # CREATE EXTENSION needs rights a deployment may have used once
            # already: then the extension is found and not created again.
            found = db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
            if found is None:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            db.execute("CREATE SCHEMA IF NOT EXISTS halls")
            db.execute(
                "CREATE TABLE IF NOT EXISTS halls.migrations "
                "(number integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r[0] for r in db.execute("SELECT number FROM halls.migrations")}
            for number, step in enumerate(MIGRATIONS, start=1):
                if number in done:
                    continue
                with db.transaction():
                    db.execute(step().encode())
                    db.execute("INSERT INTO halls.migrations(number) VALUES (%s)", (number,))
        finally:
            db.execute("SELECT pg_advisory_unlock(%s, 0)", (LOCK_SPACE,))
