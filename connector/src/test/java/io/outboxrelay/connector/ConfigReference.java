package io.outboxrelay.connector;

import io.outboxrelay.testsupport.ProjectFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ConfigKey;

/**
 * Writes {@code docs/configuration.md}, the configuration reference, from the connector's
 * {@link ConfigDef}, so the reference cannot drift from the code ({@link ConfigReferenceTest} fails when
 * the checked-in file is stale). Run {@link #COMMAND} from the repository root.
 */
public final class ConfigReference {
    static final String COMMAND = "./mvnw -q -pl connector -am install -DskipTests && ./mvnw -q -pl connector"
        + " test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.outboxrelay.connector.ConfigReference";
    static final Path FILE = Path.of("docs", "configuration.md");

    /**
     * The per-subscription keys exist only for names listed in {@code subscriptions}; the definition is
     * built for this stand-in name (a valid subscription name, unlike {@code <name>} itself) and the
     * stand-in is then shown as {@code <name>}.
     */
    private static final String STAND_IN = "__name__";

    private ConfigReference() {
    }

    public static void main(String[] args) throws IOException {
        Path target = args.length > 0 ? Path.of(args[0]) : ProjectFiles.root().resolve(FILE);
        Files.createDirectories(target.getParent());
        Files.writeString(target, render());
        System.out.println("wrote " + target.toAbsolutePath().normalize());
    }

    static String render() {
        ConfigDef def = OutboxSourceConnectorConfig.configDef(
            Map.of(OutboxSourceConnectorConfig.SUBSCRIPTIONS, STAND_IN));
        StringBuilder md = new StringBuilder();
        md.append("# Configuration reference\n\n")
            .append("<!-- Generated from OutboxSourceConnectorConfig's ConfigDef; do not edit by hand. Regenerate"
                + " from the repository root with:\n     ").append(COMMAND).append(" -->\n\n")
            .append("Keys of `").append(OutboxSourceConnector.class.getName()).append("`, by group, in the order"
                + " the Connect REST API and UIs show them. `subscription.<name>.*` exists once for every name in"
                + " `subscriptions`. Validation refuses a key under `outbox.`, `mentions.`, `subscription.`,"
                + " `connection.` or `cloudevents.` (in any case, and the slips `subscriptions.` and `mention.`) that"
                + " is not listed here (a typo would otherwise be ignored while the key meant keeps its default),"
                + " naming the nearest key.\n\n")
            .append("Connect's own connector keys (`tasks.max`, `key.converter`, `value.converter`, `transforms`,"
                + " `errors.*`, `topic.creation.*`) are documented with Kafka Connect. Two of them matter here:"
                + " with `mentions.enabled=true` one task slot runs the mention-recovery task, so `tasks.max` must"
                + " be at least 2 (relay tasks = `tasks.max` - 1); and keep `errors.tolerance=none` (the default),"
                + " because under `all` a record Connect dropped cannot be told from one a transform filtered.\n\n"
                + "Working examples: [config-examples/](../config-examples/README.md).\n");
        for (String group : def.groups()) {
            List<ConfigKey> keys = def.configKeys().values().stream()
                .filter(k -> group.equals(k.group) && !k.internalConfig) // internal keys are not the user's
                .sorted(Comparator.comparingInt((ConfigKey k) -> k.orderInGroup).thenComparing(k -> k.name))
                .toList();
            md.append("\n## ").append(group).append("\n\n")
                .append("| Key | Type | Default | Valid values | Importance | Description |\n")
                .append("|---|---|---|---|---|---|\n");
            for (ConfigKey k : keys) {
                md.append("| `").append(show(k.name)).append("` | ")
                    .append(k.type.name().toLowerCase()).append(" | ")
                    .append(defaultValue(k)).append(" | ")
                    .append(cell(validValues(k))).append(" | ")
                    .append(k.importance.name().toLowerCase()).append(" | ")
                    .append(cell(k.documentation)).append(" |\n");
            }
        }
        return md.toString();
    }

    private static String defaultValue(ConfigKey k) {
        if (!k.hasDefault()) {
            return "required";
        }
        if (k.defaultValue == null) {
            return "";
        }
        String v = ConfigDef.convertToString(k.defaultValue, k.type);
        return v.isEmpty() ? "\"\" (empty)" : "`" + show(v) + "`";
    }

    private static String validValues(ConfigKey k) {
        if (k.validator != null) {
            return k.validator.toString();
        }
        return k.type == ConfigDef.Type.BOOLEAN ? "true, false" : "";
    }

    private static String cell(String text) {
        return text == null ? "" : show(text).replace("|", "\\|").replace("\n", " ");
    }

    private static String show(String text) {
        return text.replace(STAND_IN, "<name>");
    }
}
