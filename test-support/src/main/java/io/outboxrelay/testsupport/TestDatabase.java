package io.outboxrelay.testsupport;

import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionSettings;
import io.outboxrelay.common.PostgresDataSources;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/** One database of the test server, with small helpers for writing and reading outbox rows. */
public record TestDatabase(String name, String jdbcUrl, String user, String password) {

    public Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) {
            p.setProperty("password", password);
        }
        return DriverManager.getConnection(jdbcUrl, p);
    }

    /** A pool of the relay's own kind on this database, as a relay task builds one; close it after use. */
    public HikariDataSource pool(String name, int maxSize) {
        return PostgresDataSources.pool(new ConnectionSettings(jdbcUrl, user, password, null, 30_000, 60_000, 60_000,
            "off", name), maxSize, name);
    }

    /** The connector's {@code connection.*} keys for this database. */
    public Map<String, String> connectionProps() {
        Map<String, String> m = new HashMap<>();
        m.put("connection.url", jdbcUrl);
        m.put("connection.user", user);
        if (password != null) {
            m.put("connection.password", password);
        }
        return m;
    }

    /** Applies a schema file as {@code psql -f file} would (its psql variables on their defaults). */
    public void runScript(Path file) {
        runScript(file, Map.of());
    }

    /** Applies a schema file as {@code psql -v name=value ... -f file} would ({@link SqlScript}). */
    public void runScript(Path file, Map<String, String> psqlVariables) {
        try (Connection c = connect()) {
            SqlScript.run(c, file, psqlVariables);
        } catch (SQLException e) {
            throw new IllegalStateException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Makes every UPDATE of a row of {@code table} take about {@code microsPerRow} longer (a test-only
     * trigger around pg_sleep, which waits whole milliseconds), which slows claims, stamps, lease releases
     * and mention marks alike. A test whose fault must land while a backlog drains uses it, so that
     * "mid-drain" does not depend on the machine's speed: unthrottled, a fast relay finishes a test-sized
     * backlog between the test's progress check and the fault.
     */
    public void throttleRowUpdates(String table, int microsPerRow) {
        throttle(table, microsPerRow, "");
    }

    /**
     * Makes only the stamps slow: every UPDATE that sets {@code fanned_out_at} on a row of {@code table} takes
     * about {@code microsPerRow} longer (claims, lease extensions and releases keep their speed). A test whose
     * fault must land after the records of some rows are in Kafka and before their stamp commits uses it: while
     * a stamp sleeps, the rows it stamps have all been acknowledged. {@link #unthrottleRowUpdates} takes it away.
     */
    public void throttleStamps(String table, int microsPerRow) {
        throttle(table, microsPerRow, "WHEN (OLD.fanned_out_at IS NULL AND NEW.fanned_out_at IS NOT NULL)");
    }

    private void throttle(String table, int microsPerRow, String when) {
        execute(String.format(Locale.ROOT, """
            CREATE OR REPLACE FUNCTION test_throttle_%1$s() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
              PERFORM pg_sleep(%2$f);
              RETURN NEW;
            END;
            $fn$;
            CREATE TRIGGER test_throttle BEFORE UPDATE ON %1$s FOR EACH ROW %3$s EXECUTE FUNCTION test_throttle_%1$s();
            """, table, microsPerRow / 1_000_000.0, when));
    }

    /** Takes {@link #throttleRowUpdates} away again once the fault has landed: the rest drains at full speed. */
    public void unthrottleRowUpdates(String table) {
        execute("DROP TRIGGER test_throttle ON " + table);
    }

    public void execute(String sql) {
        try (Connection c = connect(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql.length() > 200 ? sql.substring(0, 200) : sql, e);
        }
    }

    /** Inserts one event in its own transaction and returns its seq. */
    public long insertEvent(String type, String subject, String payloadJson) {
        try (Connection c = connect();
             PreparedStatement ps = c.prepareStatement(
                 "INSERT INTO events(type, subject, payload) VALUES (?, ?, ?::jsonb) RETURNING seq")) {
            ps.setString(1, type);
            ps.setString(2, subject);
            ps.setString(3, payloadJson);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Inserts {@code count} events in one statement: type {@code types[i % n]}, subject {@code subject-(i % subjects)}. */
    public void insertEvents(int count, int subjects, String... types) {
        try (Connection c = connect();
             PreparedStatement ps = c.prepareStatement(
                 "INSERT INTO events(type, subject, payload) "
                     + "SELECT (?::text[])[1 + (g % ?)], 'subject-' || (g % ?), jsonb_build_object('n', g) "
                     + "FROM generate_series(0, ? - 1) g")) {
            ps.setArray(1, c.createArrayOf("text", types));
            ps.setInt(2, types.length);
            ps.setInt(3, subjects);
            ps.setInt(4, count);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public long queryLong(String sql, Object... params) {
        List<List<Object>> rows = query(sql, params);
        Object v = rows.get(0).get(0);
        return v == null ? 0 : ((Number) v).longValue();
    }

    public List<List<Object>> query(String sql, Object... params) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            List<List<Object>> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<Object> row = new ArrayList<>(n);
                    for (int i = 1; i <= n; i++) {
                        row.add(rs.getObject(i));
                    }
                    out.add(row);
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
