package io.outboxrelay.bench;

import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.common.NamedSql;
import io.outboxrelay.connector.OutboxSourceConnector;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The two halves of the relay's pipeline measured alone. Producer: the exact record bytes a contender
 * produced (replayed from the drain's samples) sent with the producer settings Connect gives a source
 * task ({@code acks=all}, one request in flight, idempotence off, client defaults otherwise), until the
 * last one is acknowledged. SQL: the relay's own claim and stamp statements (read from the connector's
 * SQL resource, so they are the shipped ones) in a loop without Kafka: claim a batch, stamp it with a
 * realistic {@code fanout} and the receipt NOTIFY, as the task does, until the backlog is empty.
 */
final class Ceilings {
    private static final NamedSql SQL = NamedSql.load(OutboxSourceConnector.class, "outbox-relay.sql");

    private Ceilings() {
    }

    /** Records per second the producer alone sustains for these record bytes. */
    static Results.Ceiling producer(Bench b, List<RecordWatcher.Sample> samples, long count, Map<String, Object> extra,
                                    String name) throws Exception {
        if (samples.isEmpty()) {
            throw new IllegalStateException("no record samples to replay (run the warm-up drain first)");
        }
        String topic = Bench.name("ceiling-producer");
        b.kafka.createTopics(List.of(topic));
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.kafka.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.MAX_VALUE);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.MAX_VALUE);
        props.putAll(extra);
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> error = new AtomicReference<>();
        Semaphore done = new Semaphore(0);
        long t0;
        long t1;
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props, new ByteArraySerializer(),
            new ByteArraySerializer())) {
            p.partitionsFor(topic); // metadata outside the clock
            // warm-up, not measured: JIT and buffer pool
            long warm = Math.min(count, 50_000);
            Semaphore warmed = new Semaphore(0);
            AtomicLong warmAcked = new AtomicLong();
            for (long i = 0; i < warm; i++) {
                RecordWatcher.Sample s = samples.get((int) (i % samples.size()));
                p.send(new ProducerRecord<>(topic, null, s.key(), s.value(), s.headers()), (md, e) -> {
                    if (warmAcked.incrementAndGet() == warm) {
                        warmed.release();
                    }
                });
            }
            warmed.acquire();
            t0 = System.nanoTime();
            for (long i = 0; i < count; i++) {
                RecordWatcher.Sample s = samples.get((int) (i % samples.size()));
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, null, s.key(), s.value(), s.headers());
                p.send(r, (md, e) -> {
                    if (e != null) {
                        error.compareAndSet(null, e);
                    }
                    if (acked.incrementAndGet() == count) {
                        done.release();
                    }
                });
            }
            done.acquire();
            t1 = System.nanoTime();
        }
        if (error.get() != null) {
            throw error.get();
        }
        double seconds = (t1 - t0) / 1e9;
        double avg = samples.stream().mapToInt(RecordWatcher.Sample::size).average().orElse(0);
        Results.Ceiling c = new Results.Ceiling(name, "records/s", count, Results.round2(seconds),
            Math.round(count / seconds), String.format("%.0f-byte records (key+value+headers), acks=all, "
                + "max.in.flight=1, idempotence off%s", avg, extra.isEmpty() ? ", client defaults" : ", " + extra));
        b.log("  %-34s %,9d records in %6.2f s = %,7d records/s", name, count, seconds, (long) c.perSec());
        return c;
    }

    /** Rows per second the relay's claim + stamp SQL sustains with {@code clients} claimers, no Kafka. */
    static Results.Ceiling sql(Bench b, int rows, int clients, int batch) throws Exception {
        BenchPostgres.Db db = b.postgres.createDatabase("ceiling_sql");
        try {
            db.insertBacklog(0, rows, b.options.backlogTxnSize());
            NamedSql.Bindable claim = SQL.bindable("ClaimRows", "\"events\"");
            NamedSql.Bindable stamp = SQL.bindable("StampFannedOut", "\"events\"");
            NamedSql.Bindable notify = SQL.bindable("Notify", "\"events\"");
            AtomicLong done = new AtomicLong();
            AtomicReference<Exception> error = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < clients; i++) {
                int index = i;
                Thread t = new Thread(() -> {
                    try (Connection c = db.connect()) {
                        // the session setting the connector's sessions run with by default
                        try (Statement st = c.createStatement()) {
                            st.execute("SET synchronous_commit = " + ConnectionConfigKeys.DEFAULT_SYNCHRONOUS_COMMIT);
                        }
                        done.addAndGet(claimAndStampAll(c, claim, stamp, notify, clients, index, batch));
                    } catch (Exception e) {
                        error.compareAndSet(null, e);
                    }
                }, "bench-sql-ceiling-" + i);
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            long t1 = System.nanoTime();
            if (error.get() != null) {
                throw error.get();
            }
            double seconds = (t1 - t0) / 1e9;
            String name = "SQL claim+stamp, " + clients + (clients == 1 ? " client" : " clients") + ", batch " + batch;
            Results.Ceiling c = new Results.Ceiling(name, "rows/s", done.get(), Results.round2(seconds),
                Math.round(done.get() / seconds), "the connector's ClaimRows + StampFannedOut (+ receipt NOTIFY) "
                + "statements, " + rows + "-row backlog, subjects split by hashtext over the clients, synchronous_commit="
                + ConnectionConfigKeys.DEFAULT_SYNCHRONOUS_COMMIT + " (the connector's default)");
            b.log("  %-34s %,9d rows in %6.2f s = %,7d rows/s", name, done.get(), seconds, (long) c.perSec());
            return c;
        } finally {
            b.postgres.dropDatabase(db);
        }
    }

    private static long claimAndStampAll(Connection c, NamedSql.Bindable claimSql, NamedSql.Bindable stampSql,
                                         NamedSql.Bindable notifySql, int taskCount, int taskIndex, int batch)
        throws SQLException {
        String owner = "ceiling-" + taskIndex;
        long total = 0;
        try (PreparedStatement claim = c.prepareStatement(claimSql.sql());
             PreparedStatement stamp = c.prepareStatement(stampSql.sql());
             PreparedStatement notify = c.prepareStatement(notifySql.sql())) {
            while (true) {
                claimSql.set(claim, "fresh", true);
                claimSql.set(claim, "task_count", taskCount);
                claimSql.set(claim, "task_index", taskIndex);
                claimSql.set(claim, "limit", batch);
                claimSql.set(claim, "owner", owner);
                claimSql.set(claim, "lease_ms", 60_000L);
                List<Long> seqs = new ArrayList<>(batch);
                List<String> ids = new ArrayList<>(batch);
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        seqs.add(rs.getLong(1));
                        ids.add(rs.getString(2)); // read what the task reads: id, type, subject, payload, headers
                        rs.getString(3);
                        rs.getString(4);
                        rs.getString(5);
                        rs.getString(9);
                    }
                }
                if (seqs.isEmpty()) {
                    return total;
                }
                String[] fanouts = new String[seqs.size()];
                for (int k = 0; k < fanouts.length; k++) {
                    fanouts[k] = "{\"sub1\":{\"topic\":\"sub1\",\"partition\":" + (k % 3) + ",\"offset\":" + (total + k)
                        + "}}";
                }
                c.setAutoCommit(false);
                stampSql.set(stamp, "seqs", c.createArrayOf("bigint", seqs.toArray()));
                stampSql.set(stamp, "fanouts", c.createArrayOf("text", fanouts));
                stamp.executeUpdate();
                for (int from = 0; from < ids.size(); from += 200) {
                    notifySql.set(notify, "channel", "outbox_events_fanned");
                    notifySql.set(notify, "payload", String.join(",", ids.subList(from, Math.min(ids.size(), from + 200))));
                    notify.addBatch();
                }
                notify.executeBatch();
                c.commit();
                c.setAutoCommit(true);
                total += seqs.size();
            }
        }
    }
}
