-- Named statements of the writer helper. {table} is replaced by the quoted, configured table name;
-- nothing else is ever spliced into SQL.

-- name: InsertEvent
-- Runs in the caller's open transaction and never commits it. id, seq and occurred_at come from the
-- table's defaults. Params: type, subject, payload JSON text, headers JSON object text or NULL.
INSERT INTO {table} (type, subject, payload, headers)
VALUES (?, ?, ?::jsonb, ?::jsonb)
RETURNING id, seq

-- name: ReadReceipts
-- The fan-out stamps of the given events; rows the relay has not stamped yet are left out.
-- Served by the table's UNIQUE (id) index. Params: ids as text[].
SELECT id, fanned_out_at, fanout::text
  FROM {table}
 WHERE id = ANY(?::uuid[]) AND fanned_out_at IS NOT NULL
