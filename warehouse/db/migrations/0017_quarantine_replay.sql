-- A quarantined line replayed into the raw log (python -m warehouse.cli quarantine replay, or
-- `lineage quarantine replay`): when, and the log file it was written to. A replayed row is never
-- replayed again; the next compaction takes (or quarantines again) the line from that file.
alter table lineage.quarantine
    add column replayed_at timestamptz,
    add column replayed_to text;
