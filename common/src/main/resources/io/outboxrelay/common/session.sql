-- Named statements every connector session runs once, right after login (PostgresDataSources.open).

-- name: SessionSettings
-- The server settings of a connector session. Set by a statement rather than by the startup packet's
-- `options`, which PgBouncer refuses ("unsupported startup parameter: options") and other poolers drop: one
-- round trip per session opened, and the same settings on a direct connection. Behind a pooler in transaction
-- mode a session setting stays on whichever server connection ran it, so the role's own settings (ALTER ROLE
-- ... SET, docs/operations.md) are what holds there.
SELECT set_config('statement_timeout', :statement_timeout, false),
       set_config('idle_in_transaction_session_timeout', :idle_in_transaction_timeout, false),
       set_config('synchronous_commit', :synchronous_commit, false);
