-- Drops every trigger the schema put on events, whatever it is named (the shipped wake-up may change),
-- so that a wake-up variant starts from a table that sends nothing on insert.
DO $bench$
DECLARE
  t name;
BEGIN
  FOR t IN SELECT tgname FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal LOOP
    EXECUTE format('DROP TRIGGER %I ON events', t);
  END LOOP;
END;
$bench$;
