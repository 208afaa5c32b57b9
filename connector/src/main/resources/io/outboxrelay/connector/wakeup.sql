-- Named statements of the relay's wake-up (docs/wakeup.md). :flag is the quoted name of the table's flag
-- <table>_wakeup, :clears that of the count of its clears <table>_wakeup_clears (migration V4); both are
-- bound as text and resolved by the server, never spliced into the SQL.

-- name: WakeupObjects
-- Which wake-up objects the table has, and whether the session's role may use them: SELECT and UPDATE on
-- the flag (a task reads it and arms it), and UPDATE on the count (an arming that finds the flag down counts that
-- clear, migration V9, for tasks of earlier versions; without it the task arms without counting, and says so).
-- Null where the object is missing.
SELECT to_regclass(:flag) IS NOT NULL AS has_flag,
       to_regclass(:clears) IS NOT NULL AS has_clears,
       CASE WHEN to_regclass(:flag) IS NOT NULL
            THEN has_sequence_privilege(to_regclass(:flag), 'SELECT')
                 AND has_sequence_privilege(to_regclass(:flag), 'UPDATE') END AS may_arm,
       CASE WHEN to_regclass(:clears) IS NOT NULL
            THEN has_sequence_privilege(to_regclass(:clears), 'UPDATE, USAGE') END AS may_add_to_count,
       current_user::text AS role;

-- name: ArmFlag
-- Sets the flag where it reads anything but 1, and writes nothing where it is up already: a quiet task arms at every
-- look (docs/wakeup.md), and a setval takes a transaction id and writes WAL. A writer that takes the flag down after
-- this read saw it up, and NOTIFYs. A flag found down was taken down since the last arming (or never set), and where
-- the role may (migration V9) the arming counts that clear first (the setval depends on the count, so it comes
-- after): tasks of earlier versions, during a rolling upgrade, wait until the count moves; this version reads it
-- nowhere. Without the grant (or once it is revoked) the arming counts nothing, as before V9. Returns whether it
-- set the flag.
WITH before AS MATERIALIZED (
  SELECT CASE WHEN pg_sequence_last_value(:flag::regclass) IS DISTINCT FROM 1
              THEN CASE WHEN has_sequence_privilege(:clears::regclass, 'UPDATE, USAGE')
                        THEN nextval(:clears::regclass) ELSE 0 END END AS counted)
SELECT CASE WHEN counted IS NOT NULL THEN setval(:flag::regclass, 1 + 0 * counted, true) = 1 ELSE false END FROM before;

-- name: ArmFlagWithoutCount
-- A table without migration V4: the flag alone, set where it reads anything but 1.
SELECT CASE WHEN pg_sequence_last_value(:flag::regclass) IS DISTINCT FROM 1 THEN setval(:flag::regclass, 1, true) = 1
            ELSE false END;
