package io.outboxrelay.embedded;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Properties;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/** One KRaft broker in this JVM: Kafka's own test harness, a real broker on loopback. */
public final class EmbeddedBroker {
    private EmbeddedBroker() {
    }

    /**
     * Starts a one-broker cluster with {@code brokerProps} on top of the harness's defaults. The KRaft
     * storage formatter prints its bootstrap records to System.out; they are kept off the terminal.
     */
    public static EmbeddedKafkaCluster start(Properties brokerProps) {
        EmbeddedKafkaCluster cluster = new EmbeddedKafkaCluster(1, brokerProps);
        PrintStream stdout = System.out;
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        try {
            cluster.start();
        } finally {
            System.setOut(stdout);
        }
        return cluster;
    }
}
