-- Named statements of the housekeeping of a partitioned outbox (migration V5, docs/partitioned-outbox.md).
-- {ahead} and {drop} are the quoted names of the table's functions <table>_partitions_ahead and
-- <table>_drop_partitions, made from outbox.table as the table's own name is; :table is the quoted table
-- name, bound as text and resolved by the server.

-- name: PartitionedTable
-- Whether the outbox is a partitioned table, and whether V5's functions are there for it (a table partitioned
-- by hand has neither: the relay then leaves its partitions to the operator).
SELECT c.relkind = 'p' AS partitioned,
       to_regprocedure(:ahead_signature) IS NOT NULL AS has_ahead,
       to_regprocedure(:drop_signature) IS NOT NULL AS has_drop
  FROM pg_class c
 WHERE c.oid = :table::regclass;

-- name: PartitionsAhead
-- Makes the partitions of today and the next :days days that are missing; returns how many it made.
SELECT {ahead}(:days::int);

-- name: DropPartitions
-- Retention by partition: drops each partition that ended :retention_ms ago or earlier and holds no
-- un-fanned row; one row per partition past the cutoff, dropped or kept and why.
SELECT partition_name, upper_bound, dropped, pending, poisoned
  FROM {drop}(now() - :retention_ms::bigint * interval '1 millisecond');
