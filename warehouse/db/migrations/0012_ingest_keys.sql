-- Ingest keys (lineage.ingest_keys): static bearer secrets for OpenLineage producers, each bound
-- to a principal whose grants decide what it may write. Only the key's SHA-256 is stored; the
-- first characters are kept to tell keys apart. Revoked keys stay listed (revoked_at).
create table lineage.ingest_keys (
    key_id          bigint generated always as identity primary key,
    name            text not null,
    principal       text not null,
    key_hash        text not null unique,
    shown_part      text not null,
    created_by      text not null,
    created_at      timestamptz not null default now(),
    last_used_at    timestamptz,
    revoked_at      timestamptz,
    revoked_by      text
);
