-- Named statements of PostgresListener, the session that LISTENs for the relay's and the mention task's
-- wake-ups. {channel} is the channel quoted by pgjdbc's Utils.escapeIdentifier, the only thing spliced in.

-- name: Listen
LISTEN {channel};

-- name: Unlisten
-- While the owner has no use for notifications: PostgreSQL wakes every listening session of the database for
-- each NOTIFY sent there, whatever its channel.
UNLISTEN {channel};

-- name: Probe
-- A round trip that proves the session alive.
SELECT 1;

-- name: Echo
-- Sent from another session than the listening one, with a payload of the listener's own: it must arrive on the
-- listening session, or that session hears nothing (LISTEN through PgBouncer in transaction mode does not).
SELECT pg_notify(?, ?);
