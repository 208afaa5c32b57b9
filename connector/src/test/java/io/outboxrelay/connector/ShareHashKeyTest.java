package io.outboxrelay.connector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The validator's reading of the claim index's second key, as pg_get_indexdef prints it (PostgreSQL 13-17). */
class ShareHashKeyTest {
    @Test
    void theKeyOfMigrationV10IsTheShareHashOfItsSubjectColumn() {
        // as PostgreSQL 17 prints the key of column 2 (the parentheses of an expression key around it)
        assertThat(OutboxLiveValidator.isShareHash("(((hashtext(subject))::bigint + '2147483648'::bigint))", "subject"))
            .isTrue();
        assertThat(OutboxLiveValidator.isShareHash(
            "(((hashtext((aggregateid)::text))::bigint + '2147483648'::bigint))", "aggregateid")).isTrue();
        assertThat(OutboxLiveValidator.isShareHash("((hashtext(subject))::bigint + '2147483648'::bigint)", "subject"))
            .isTrue();
        // a varchar column, as an adopted table has it, and a name that needs quotes
        assertThat(OutboxLiveValidator.isShareHash(
            "((hashtext((aggregateid)::text))::bigint + '2147483648'::bigint)", "aggregateid")).isTrue();
        assertThat(OutboxLiveValidator.isShareHash("((hashtext(\"Subject\"))::bigint + '2147483648'::bigint)",
            "Subject")).isTrue();
    }

    @Test
    void otherKeysAreNot() {
        assertThat(OutboxLiveValidator.isShareHash(null, "subject")).as("no second key").isFalse();
        assertThat(OutboxLiveValidator.isShareHash("hashtext(subject)", "subject")).as("V7's key").isFalse();
        assertThat(OutboxLiveValidator.isShareHash("((hashtext(type))::bigint + '2147483648'::bigint)", "subject"))
            .as("another column").isFalse();
        assertThat(OutboxLiveValidator.isShareHash("occurred_at", "subject")).isFalse();
        assertThat(OutboxLiveValidator.isShareHash("(((hashtext(subject))::bigint + '1'::bigint))", "subject"))
            .as("another offset").isFalse();
    }
}
