-- One wording of a failed-checks incident's reason, for the compaction's merge (OpenLineage's
-- dataQualityAssertions) and `lineage incidents from-gx` (warehouse.db.incident_store.record_check):
-- `failed checks: not_null (customer_id), row_count`, in the checks' order, cut to 4096 characters.
create function lineage.failed_checks_reason(checks jsonb) returns text
language sql immutable as $$
    select left('failed checks: ' || coalesce(string_agg(
               (c ->> 'assertion') || coalesce(' (' || (c ->> 'column') || ')', ''), ', ' order by n), ''), 4096)
    from jsonb_array_elements(checks) with ordinality as item(c, n)
$$;
