-- The "primary-key-only" table: the same columns and CHECK constraints, but no index other than the
-- primary key (the id UNIQUE constraint and both partial indexes go, and anything added later), the
-- default fillfactor, and no trigger (applied after drop-triggers.sql). The floor for a single-row
-- durable insert into a table of this shape.
DO $bench$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype IN ('u', 'x') LOOP
    EXECUTE format('ALTER TABLE events DROP CONSTRAINT %I', r.conname);
  END LOOP;
  FOR r IN SELECT indexrelid::regclass AS idx FROM pg_index WHERE indrelid = 'events'::regclass AND NOT indisprimary LOOP
    EXECUTE format('DROP INDEX %s', r.idx);
  END LOOP;
END;
$bench$;
ALTER TABLE events RESET (fillfactor);
