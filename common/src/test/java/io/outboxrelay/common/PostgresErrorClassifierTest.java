package io.outboxrelay.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * Which database errors a task retries and which fail it with a hint. Guards against a task that
 * fails for good on a restart or deadlock, and one that retries forever on a wrong password or a
 * missing table, saying nothing an operator could act on.
 */
class PostgresErrorClassifierTest {

    @ParameterizedTest(name = "{0} is retriable")
    @ValueSource(strings = {
        "08000", "08001", "08003", "08004", "08006", "08P01", // connection exception class
        "57P01", // admin_shutdown: server restarting
        "57P02", "57P03", // crash_shutdown, cannot_connect_now (starting up)
        "40P01", // deadlock_detected
        "40001", // serialization_failure
        "55P03", // lock_not_available (lock_timeout)
        "57014", // query_canceled (statement_timeout)
        "53300", // too_many_connections
    })
    void transientServerConditionsAreRetried(String state) {
        SQLException e = new SQLException("server said something", state);

        assertThat(PostgresErrorClassifier.isRetriable(e)).isTrue();
        RuntimeException classified = PostgresErrorClassifier.classify("claim from \"events\"", e);
        assertThat(classified).isInstanceOf(RetriableException.class).hasCause(e);
        assertThat(classified.getMessage())
            .startsWith("claim from \"events\" failed: server said something")
            .contains("SQLState " + state)
            .contains("will retry");
    }

    @ParameterizedTest(name = "{0} is fatal with a hint naming {1}")
    @CsvSource(delimiter = '|', value = {
        "42P01 | schemas/sql/outbox.sql",
        "42703 | schemas/sql/outbox.sql",
        "42501 | GRANT",
        "28P01 | connection.password",
        "28000 | connection.user",
        "3D000 | connection.url",
    })
    void errorsARetryCannotFixFailWithAnActionableHint(String state, String hintNames) {
        SQLException e = new SQLException("server said no", state);

        assertThat(PostgresErrorClassifier.isRetriable(e)).isFalse();
        RuntimeException classified = PostgresErrorClassifier.classify("claim from \"events\"", e);
        assertThat(classified).isExactlyInstanceOf(ConnectException.class).hasCause(e);
        assertThat(classified.getMessage())
            .startsWith("claim from \"events\" failed: server said no (SQLState " + state + ")")
            .contains(hintNames)
            .doesNotContain("will retry");
    }

    @Test
    void theDriversOwnExceptionsAreClassifiedByTheirState() {
        PSQLException missingTable = new PSQLException("ERROR: relation \"events\" does not exist",
            PSQLState.UNDEFINED_TABLE);
        PSQLException wrongPassword = new PSQLException("FATAL: password authentication failed for user \"relay\"",
            PSQLState.INVALID_PASSWORD);
        PSQLException refused = new PSQLException("Connection to localhost:1 refused",
            PSQLState.CONNECTION_UNABLE_TO_CONNECT, new java.net.ConnectException("Connection refused"));

        assertThat(PostgresErrorClassifier.classify("claim", missingTable))
            .isExactlyInstanceOf(ConnectException.class)
            .hasMessageContaining("does not exist")
            .hasMessageContaining("create it with schemas/sql/outbox.sql");
        assertThat(PostgresErrorClassifier.classify("claim", wrongPassword))
            .isExactlyInstanceOf(ConnectException.class)
            .hasMessageContaining("check connection.user and connection.password");
        assertThat(PostgresErrorClassifier.classify("claim", refused)).isInstanceOf(RetriableException.class);
    }

    /**
     * HikariCP reports a connection it could not open as SQLTransientConnectionException carrying the
     * driver's state. A wrong password behind it must still fail the task, not back off forever.
     */
    @Test
    void aPoolTimeoutIsClassifiedByTheDriverErrorBehindIt() {
        PSQLException wrongPassword = new PSQLException("FATAL: password authentication failed for user \"relay\"",
            PSQLState.INVALID_PASSWORD);
        SQLTransientConnectionException poolTimeout = new SQLTransientConnectionException(
            "outbox-relay-x - Connection is not available, request timed out after 10000ms", "28P01", wrongPassword);

        RuntimeException classified = PostgresErrorClassifier.classify("claim", poolTimeout);

        assertThat(classified).isExactlyInstanceOf(ConnectException.class);
        assertThat(classified.getMessage())
            .contains("Connection is not available")
            .contains("password authentication failed") // the driver's reason, not only the pool's
            .contains("connection.password");

        SQLTransientConnectionException serverDown = new SQLTransientConnectionException(
            "outbox-relay-x - Connection is not available, request timed out after 10000ms", "08001",
            new PSQLException("Connection refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT));
        assertThat(PostgresErrorClassifier.classify("claim", serverDown)).isInstanceOf(RetriableException.class);
    }

    @Test
    void withoutAStateOnlyTransientTypesAndBrokenSocketsAreRetried() {
        assertThat(PostgresErrorClassifier.isRetriable(
            new SQLTransientConnectionException("pool timed out", (String) null))).isTrue();
        assertThat(PostgresErrorClassifier.isRetriable(
            new SQLException("An I/O error occurred", (String) null, new SocketException("reset")))).isTrue();
        assertThat(PostgresErrorClassifier.isRetriable(
            new SQLException("An I/O error occurred", null, new IOException("EOF")))).isTrue();
        assertThat(PostgresErrorClassifier.isRetriable(new SQLException("something odd"))).isFalse();
    }

    @Test
    void unknownFatalStatesGetNoMadeUpHint() {
        assertThat(PostgresErrorClassifier.hint("22P02")).isEmpty();
        assertThat(PostgresErrorClassifier.hint(null)).isEmpty();
        assertThat(PostgresErrorClassifier.classify("claim", new SQLException("invalid input", "22P02")))
            .isExactlyInstanceOf(ConnectException.class)
            .hasMessage("claim failed: invalid input (SQLState 22P02)");
    }
}
