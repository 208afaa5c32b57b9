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
-- listening session, or that session hears nothing (LISTEN through PgBouncer in transaction mode does not). Like a
-- writer's trigger, it sends nothing while the server's NOTIFY queue is over half full (a listener stuck in a long
-- transaction holds it): a row comes back only when it was sent. A role refused EXECUTE on the function sends none.
SELECT pg_notify(?, ?) WHERE pg_notification_queue_usage() <= 0.5;
