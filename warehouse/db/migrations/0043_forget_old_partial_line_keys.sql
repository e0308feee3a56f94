-- Before the ledger recorded an OpenLineage line once (the line's envelope id), a line some of
-- whose events were set aside (their namespace did not exist) recorded each event merged, its
-- kept event's id among them; that id is the line's, so its key is now the line's own key, and
-- the line, replayed or sent again once the namespace exists, would be dropped whole as
-- compacted, losing what was set aside. This migration's backfill
-- (warehouse.db.quarantine_store.forget_old_partial_line_keys) removes those keys for the lines
-- still in the quarantine, once a running compaction has committed.
select pg_advisory_xact_lock(7265402);
