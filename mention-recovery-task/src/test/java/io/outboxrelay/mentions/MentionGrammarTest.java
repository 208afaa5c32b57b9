package io.outboxrelay.mentions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The one mention grammar: which handles a message's blocks mention. */
class MentionGrammarTest {

    private static String text(String text) {
        return "[{\"type\":\"text\",\"text\":\"" + text + "\"}]";
    }

    @Test
    void readsMentionsFromTextBlocksOnly() {
        String blocks = "[{\"type\":\"text\",\"text\":\"hi @ada\"},"
            + "{\"type\":\"code\",\"text\":\"@notme\"},"
            + "{\"type\":\"image\",\"text\":\"@notme2\"},"
            + "{\"type\":\"text\",\"text\":\"and @bob\"}]";

        assertThat(MentionGrammar.handles(blocks)).containsExactly("ada", "bob");
    }

    @Test
    void findsAHandleAtTheStartOfTheText() {
        assertThat(MentionGrammar.handles(text("@ada please look"))).containsExactly("ada");
    }

    @Test
    void findsAHandleAfterPunctuationOrWhitespace() {
        assertThat(MentionGrammar.handles(text("(@ada), \\\"@bob\\\" x:@cy\\n@dee"))).containsExactly("ada", "bob", "cy", "dee");
    }

    @Test
    void doesNotTakeAnEmailAddressForAMention() {
        assertThat(MentionGrammar.handles(text("write to bob@example.com or ada_1@x.org"))).isEmpty();
    }

    @Test
    void takesAnAtSignRightAfterALetterOfAScriptWithoutSpacesForAMention() {
        // a word character is ASCII, as in the chat server's grammar: a Unicode class lost these mentions
        assertThat(MentionGrammar.handles(text("请@ada 看看, ありがとう@Bob、x²@cy"))).containsExactly("ada", "bob", "cy");
        assertThat(MentionGrammar.handles(text("ada_@x x9@y"))).as("after an ASCII word character: none").isEmpty();
    }

    @Test
    void dropsTrailingDots() {
        assertThat(MentionGrammar.handles(text("thanks @ada. And @bob... ok"))).containsExactly("ada", "bob");
    }

    @Test
    void keepsHyphensUnderscoresAndDotsInsideAHandle() {
        assertThat(MentionGrammar.handles(text("@deploy-bot @agent_7 @ops.runner.")))
            .containsExactly("deploy-bot", "agent_7", "ops.runner");
    }

    @Test
    void needsALetterOrDigitRightAfterTheAtSign() {
        assertThat(MentionGrammar.handles(text("@ @_x @-y @.z @"))).isEmpty();
    }

    @Test
    void lowerCasesHandles() {
        assertThat(MentionGrammar.handles(text("@Ada @BOB"))).containsExactly("ada", "bob");
    }

    @Test
    void returnsEachHandleOnceInFirstSeenOrder() {
        String blocks = "[{\"type\":\"text\",\"text\":\"@bob @ada @Bob\"},{\"type\":\"text\",\"text\":\"@ADA @cy\"}]";

        assertThat(MentionGrammar.handles(blocks)).containsExactly("bob", "ada", "cy");
    }

    @Test
    void returnsReservedPingsAsHandlesAndRecognisesThem() {
        assertThat(MentionGrammar.handles(text("@all @Channel @agents @alice"))).containsExactly("all", "channel", "agents", "alice");
        assertThat(MentionGrammar.isReservedPing("all")).isTrue();
        assertThat(MentionGrammar.isReservedPing("CHANNEL")).isTrue();
        assertThat(MentionGrammar.isReservedPing("agents")).isTrue();
        assertThat(MentionGrammar.isReservedPing("alice")).isFalse();
        assertThat(MentionGrammar.isReservedPing("agent")).isFalse();
    }

    /**
     * Valid blocks past Jackson's default limits (jsonb prints {@code 1e1000} as a 1,001-digit number; deep nesting; a
     * long field name) are read: they had been refused as "not valid JSON", and the message's mentions never routed.
     */
    @Test
    void readsValidBlocksPastJacksonsDefaultLimits() {
        String number = "1" + "0".repeat(1_000);
        String deep = "[".repeat(1_500) + "]".repeat(1_500);
        String longName = "k".repeat(60_000);
        String blocks = "[{\"type\":\"code\",\"n\":" + number + ",\"d\":" + deep + ",\"" + longName + "\":1},"
            + "{\"type\":\"text\",\"text\":\"hi @ada\"}]";
        assertThat(MentionGrammar.handles(blocks)).containsExactly("ada");
    }

    @Test
    void findsNothingInAnEmptyBlockListOrATextBlockWithoutText() {
        assertThat(MentionGrammar.handles("[]")).isEmpty();
        assertThat(MentionGrammar.handles("[{\"type\":\"text\"}]")).isEmpty();
    }

    @Test
    void readsPlainTextWithTheSameRules() {
        assertThat(MentionGrammar.handlesInText("@Ada, mail bob@example.com and @ada.")).containsExactly("ada");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"type\":\"text\",\"text\":\"@ada\"}", "\"@ada\"", "null", "42", "not json", "[1, 2"})
    void refusesBlocksThatAreNotAJsonArray(String blocks) {
        assertThatThrownBy(() -> MentionGrammar.handles(blocks))
            .isInstanceOf(MalformedBlocksException.class)
            .hasMessageStartingWith("blocks is not");
    }

    @Test
    void refusesABlockThatIsNotAnObject() {
        assertThatThrownBy(() -> MentionGrammar.handles("[{\"type\":\"text\",\"text\":\"@ada\"}, \"@bob\"]"))
            .isInstanceOf(MalformedBlocksException.class)
            .hasMessage("block 1 is not a JSON object but a string");
    }

    @Test
    void refusesATextBlockWhoseTextIsNotAString() {
        assertThatThrownBy(() -> MentionGrammar.handles("[{\"type\":\"text\",\"text\":[\"@ada\"]}]"))
            .isInstanceOf(MalformedBlocksException.class)
            .hasMessageContaining("not a string");
    }

    @Test
    void neverQuotesTheMessageTextInAFault() {
        assertThatThrownBy(() -> MentionGrammar.handles("[{\"type\":\"text\",\"text\":\"secret plans @ada\"} oops"))
            .isInstanceOf(MalformedBlocksException.class)
            .message().doesNotContain("secret");
    }

    @ParameterizedTest
    @ValueSource(strings = {"[\"@bob\", oops]", "[{\"type\":\"text\",\"text\":1}] x", "", "[{\"a\" 1}]", "[1,]"})
    void reportsTextThatIsNotJsonAsSuchWhereverTheFaultIs(String blocks) {
        assertThatThrownBy(() -> MentionGrammar.handles(blocks))
            .isInstanceOf(MalformedBlocksException.class)
            .hasMessageStartingWith("blocks is not valid JSON: ");
    }

    @Test
    void namesThePositionOfTheFaultWithoutQuotingTheText() {
        assertThatThrownBy(() -> MentionGrammar.handles("[{\"text\": secret}]"))
            .hasMessage("blocks is not valid JSON: malformed JSON at position 10");
    }

    @Test
    void reportsTheFirstFaultyBlockAndKeepsTheLastValueOfARepeatedName() {
        assertThatThrownBy(() -> MentionGrammar.handles("[{\"type\":\"code\",\"type\":\"text\",\"text\":{}}, 2]"))
            .hasMessage("block 0 has a text that is not a string but an object");
        assertThat(MentionGrammar.handles("[{\"text\":\"@bob\",\"type\":\"text\",\"text\":\"@ada\"}]"))
            .containsExactly("ada");
    }
}
