-- Outbox Relay migration V5: the outbox as a table partitioned by day of occurred_at, asked for with the
-- setting outbox_relay.partitioned = 'daily' (psql -v partitioned=daily -f schemas/sql/outbox.sql; Flyway:
-- initSql; Liquibase: the changelog's parameter outbox_partitioned). Without it, a plain table is left as it
-- is and nothing is made. docs/partitioned-outbox.md says what it makes and what it costs:
--   <table>_pYYYYMMDD             one partition a UTC day, made 7 days ahead, plus <table>_default for the rest
--   <table>_partitions_ahead(d)   makes the partitions of today and the next d days (the relay calls it hourly)
--   <table>_drop_partitions(t)    drops each day partition that ended before t and holds no un-fanned row
--   <table>_ids                   every id once: the table's id stays unique across partitions
-- A plain table made by V1 is rebuilt partitioned only while it is empty (a fresh install); one with rows is
-- refused with a pointer to docs/partitioned-outbox.md, "From a plain table".
-- The table and channel default to events and outbox_events; for others, set these in the migrating session
-- first (Flyway: initSql; Liquibase: the changelog's parameters):
--   SET outbox_relay.outbox_table = 'app.events'; SET outbox_relay.notify_channel = 'app_outbox';
-- schemas/sql/outbox.sql runs V1 to V5 in one go. README "Upgrading" says which to apply when.

DO $outbox$
DECLARE
  -- The names: psql -v table=... -v channel=... (outbox.sql), or these settings of the session.
  configured text := COALESCE(NULLIF(current_setting('outbox_relay.outbox_table', true), ''), 'events');
  ch text := COALESCE(NULLIF(current_setting('outbox_relay.notify_channel', true), ''), 'outbox_events');
  mode text := COALESCE(NULLIF(current_setting('outbox_relay.partitioned', true), ''), 'no');
  dot int := position('.' IN configured);
  s text := CASE WHEN dot > 0 THEN left(configured, dot - 1) ELSE current_schema() END;
  n text := CASE WHEN dot > 0 THEN substr(configured, dot + 1) ELSE configured END;
  tbl text := format('%I.%I', s, n);
  kind "char";
  has_rows boolean;
  serial text;
  acl aclitem[];
  grant_row record;
  pending_view text;
  poisoned_view text;
BEGIN
  IF s IS NULL OR s = '' OR n = '' THEN
    RAISE EXCEPTION 'outbox_relay.outbox_table % names no table (schema %)', configured, s;
  END IF;
  IF mode NOT IN ('no', 'daily') THEN
    RAISE EXCEPTION 'outbox_relay.partitioned is %, but the outbox can be partitioned daily or not at all', mode
      USING HINT = 'psql -v partitioned=daily, or leave the variable unset for a plain table';
  END IF;
  SELECT c.relkind INTO kind FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
   WHERE ns.nspname = s AND c.relname = n;
  IF kind IS DISTINCT FROM 'p' AND mode = 'no' THEN
    RETURN; -- a plain table stays as it is
  END IF;

  IF kind = 'r' THEN
    -- A plain table asked to be partitioned: rebuilt while empty, with the same columns, defaults, checks,
    -- sequence, trigger, views and grants; PostgreSQL cannot turn a table with rows into a partitioned one.
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', tbl) INTO has_rows;
    IF has_rows THEN
      RAISE EXCEPTION '% holds rows, so it cannot be rebuilt partitioned here', tbl
        USING HINT = 'docs/partitioned-outbox.md, "From a plain table": attach it as the first partition';
    END IF;
    serial := pg_get_serial_sequence(tbl, 'seq');
    SELECT relacl INTO acl FROM pg_class WHERE oid = tbl::regclass;
    pending_view := pg_get_viewdef(to_regclass(format('%I.%I', s, n || '_pending')));
    poisoned_view := pg_get_viewdef(to_regclass(format('%I.%I', s, n || '_poisoned')));
    EXECUTE format('DROP VIEW IF EXISTS %I.%I, %I.%I', s, n || '_pending', s, n || '_poisoned');
    IF serial IS NOT NULL THEN
      EXECUTE format('ALTER SEQUENCE %s OWNED BY NONE', serial);
    END IF;
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS'
      || ' INCLUDING STORAGE) PARTITION BY RANGE (occurred_at)', s, n || '_v5', tbl);
    -- fails, naming them, when objects other than the operators' views depend on the table
    EXECUTE format('DROP TABLE %s', tbl);
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', s, n || '_v5', n);
    IF serial IS NOT NULL THEN
      EXECUTE format('ALTER SEQUENCE %s OWNED BY %s.seq', serial, tbl);
    END IF;
    -- a unique key of a partitioned table holds its partition key; seq alone is unique by its sequence
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY (seq, occurred_at)', tbl, n || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %s (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL',
      n || '_unfanned_idx', tbl);
    EXECUTE format('CREATE INDEX %I ON %s (seq) WHERE poisoned_at IS NOT NULL', n || '_poisoned_idx', tbl);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT EXECUTE FUNCTION %I.%I(%L)',
      n || '_notify_insert', tbl, s, n || '_notify', ch);
    IF pending_view IS NOT NULL THEN
      EXECUTE format('CREATE VIEW %I.%I AS %s', s, n || '_pending', pending_view);
    END IF;
    IF poisoned_view IS NOT NULL THEN
      EXECUTE format('CREATE VIEW %I.%I AS %s', s, n || '_poisoned', poisoned_view);
    END IF;
    FOR grant_row IN SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS who,
                            a.privilege_type AS what
                       FROM unnest(acl) g, aclexplode(ARRAY[g]) a LEFT JOIN pg_roles r ON r.oid = a.grantee
                      WHERE a.grantee <> a.grantor LOOP
      EXECUTE format('GRANT %s ON %s TO %s', grant_row.what, tbl, grant_row.who);
    END LOOP;
  END IF;

  -- The id is unique across partitions through this table: a unique key on the outbox itself would have to
  -- hold occurred_at. A row's id is entered as the row is inserted (a duplicate fails the insert, as on a
  -- plain table, under the same constraint name) and leaves with the row or its partition.
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I (id uuid NOT NULL, CONSTRAINT %I PRIMARY KEY (id))',
    s, n || '_ids', n || '_id_key');
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM %3$I.%4$I WHERE id = OLD.id;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO %3$I.%4$I (id) VALUES (NEW.id);
      END IF;
      RETURN NULL;
    END;
    $fn$
  $ddl$, s, n || '_ids_keep', s, n || '_ids');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', n || '_ids_keep', tbl);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR DELETE OR UPDATE OF id ON %s FOR EACH ROW EXECUTE FUNCTION %I.%I()',
    n || '_ids_keep', tbl, s, n || '_ids_keep');

  -- A row of a day without its partition lands here, so no insert fails for want of one.
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I PARTITION OF %s DEFAULT WITH (fillfactor = 50)',
    s, n || '_default', tbl);

  -- The partitions of today and the next days (UTC), each with the plain table's storage settings. A day an
  -- operator made by hand (any name) is left as it is; a day the default partition holds rows of is left to
  -- it, with a warning (docs/partitioned-outbox.md). After a new day, the parent is analyzed: autovacuum
  -- never analyzes a partitioned table itself.
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(days int DEFAULT 7) RETURNS int
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s' AS $fn$
    DECLARE
      first_day date := (now() AT TIME ZONE 'UTC')::date;
      made int := 0;
    BEGIN
      IF days IS NULL OR days < 0 OR days > 366 THEN
        RAISE EXCEPTION 'days is %%, but partitions are made 0 to 366 days ahead', days;
      END IF;
      FOR d IN 0..days LOOP
        CONTINUE WHEN to_regclass(format('%%I.%%I', %3$L, %4$L || to_char(first_day + d, 'YYYYMMDD'))) IS NOT NULL;
        BEGIN
          EXECUTE format('CREATE TABLE %%I.%%I PARTITION OF %%s FOR VALUES FROM (%%L) TO (%%L) WITH (fillfactor = 50,'
            || ' autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.05,'
            || ' autovacuum_analyze_scale_factor = 0.02)', %3$L, %4$L || to_char(first_day + d, 'YYYYMMDD'), %5$L,
            (first_day + d)::timestamp AT TIME ZONE 'UTC', (first_day + d + 1)::timestamp AT TIME ZONE 'UTC');
          made := made + 1;
        EXCEPTION
          WHEN invalid_object_definition THEN
            NULL; -- a partition made by hand covers (part of) the day
          WHEN check_violation THEN
            RAISE WARNING 'the default partition of %% holds rows of %%, so that day stays in it', %5$L, first_day + d;
        END;
      END LOOP;
      IF made > 0 OR NOT EXISTS (SELECT 1 FROM pg_statistic WHERE starelid = %5$L::regclass) THEN
        EXECUTE format('ANALYZE %%s', %5$L);
      END IF;
      RETURN made;
    END;
    $fn$
  $ddl$, s, n || '_partitions_ahead', s, n || '_p', tbl);

  -- Retention by partition (the relay calls it with now() - outbox.retention.ms): each partition whose upper
  -- bound is at or before older_than is dropped when it holds no un-fanned row (pending or poisoned), with its
  -- ids; one that does is kept. One row a partition past older_than: what became of it and why. The table is
  -- locked while it looks, only when some partition is past older_than (once a day).
  EXECUTE format($ddl$
    CREATE OR REPLACE FUNCTION %1$I.%2$I(older_than timestamptz)
      RETURNS TABLE (partition_name text, upper_bound timestamptz, dropped boolean, pending bigint, poisoned bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '5s'
    -- its own plans, not the relay session's (which turns sequential and bitmap scans off): it reads whole partitions
    SET enable_seqscan = on SET enable_bitmapscan = on AS $fn$
    DECLARE
      locked boolean := false;
      p record;
    BEGIN
      FOR p IN SELECT c.oid::regclass::text AS part, c.relname::text AS rel,
                      substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz AS upper
                 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = %3$L::regclass
                ORDER BY 3 LOOP
        CONTINUE WHEN p.upper IS NULL OR p.upper > older_than;
        IF NOT locked THEN
          EXECUTE format('LOCK TABLE %%s IN ACCESS EXCLUSIVE MODE', %3$L);
          locked := true;
        END IF;
        partition_name := p.rel;
        upper_bound := p.upper;
        EXECUTE format('SELECT count(*) FROM %%s WHERE fanned_out_at IS NULL AND poisoned_at IS NULL', p.part) INTO pending;
        EXECUTE format('SELECT count(*) FROM %%s WHERE poisoned_at IS NOT NULL AND fanned_out_at IS NULL', p.part)
          INTO poisoned;
        dropped := pending = 0 AND poisoned = 0;
        IF dropped THEN
          EXECUTE format('DELETE FROM %%I.%%I x WHERE x.id IN (SELECT id FROM %%s)', %4$L, %5$L, p.part);
          EXECUTE format('DROP TABLE %%s', p.part);
        END IF;
        RETURN NEXT;
      END LOOP;
    END;
    $fn$
  $ddl$, s, n || '_drop_partitions', tbl, s, n || '_ids');

  -- the partitions of the coming week, made now
  EXECUTE format('SELECT %I.%I(7)', s, n || '_partitions_ahead');

  -- The relay makes partitions ahead; dropping them is retention's, granted like DELETE on a plain table:
  --   GRANT EXECUTE ON FUNCTION <table>_drop_partitions(timestamptz) TO outbox_relay;
  EXECUTE format('REVOKE ALL ON FUNCTION %I.%I(int) FROM PUBLIC', s, n || '_partitions_ahead');
  EXECUTE format('REVOKE ALL ON FUNCTION %I.%I(timestamptz) FROM PUBLIC', s, n || '_drop_partitions');
  EXECUTE format('GRANT EXECUTE ON FUNCTION %I.%I(int) TO outbox_relay', s, n || '_partitions_ahead');
END;
$outbox$;
