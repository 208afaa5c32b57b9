-- The "legacy" wake-up: the outbox trigger as schemas/sql/outbox.sql shipped it before issue 13, kept
-- here so the benchmark can compare it with whatever ships now. One NOTIFY on the relay's default
-- channel per inserting statement, in every writing transaction. Applied after drop-triggers.sql.
CREATE OR REPLACE FUNCTION bench_legacy_events_notify() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify(COALESCE(TG_ARGV[0], 'outbox_events'), '');
  RETURN NULL;
END;
$fn$;

CREATE TRIGGER bench_legacy_events_notify_insert
  AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION bench_legacy_events_notify('outbox_events');
