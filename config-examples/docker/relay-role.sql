-- The login role the connector uses (docker-compose.yml): a member of the outbox_relay group that
-- schemas/sql/outbox.sql creates, with nothing of its own. Demo password only; it matches
-- OUTBOX_RELAY_DB_PASSWORD in docker-compose.yml.
CREATE ROLE relay LOGIN PASSWORD 'relay-demo' IN ROLE outbox_relay;
