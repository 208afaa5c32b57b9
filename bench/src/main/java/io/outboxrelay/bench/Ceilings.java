package io.outboxrelay.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outboxrelay.common.ConnectionConfigKeys;
import io.outboxrelay.connector.ClaimAndStampLoop;
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
 * last one is acknowledged. SQL: the relay's own claim and stamp (its {@code JdbcOutboxStore}, so the shipped
 * statements bound as the task binds them) in a loop without Kafka: claim a batch, stamp it with a realistic
 * {@code fanout} and the receipt NOTIFY, as the task does, until the backlog is empty.
 */
final class Ceilings {
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
        BenchDatabases.Db db = b.postgres.createDatabase("ceiling_sql");
        try {
            db.insertBacklog(0, rows, b.options.backlogTxnSize());
            AtomicLong done = new AtomicLong();
            AtomicReference<Exception> error = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < clients; i++) {
                int index = i;
                Thread t = new Thread(() -> {
                    try (HikariDataSource pool = onePool(db)) {
                        done.addAndGet(new ClaimAndStampLoop(pool, "ceiling-" + index, clients, index).claimAndStampAll(batch));
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
                Math.round(done.get() / seconds), "the connector's own pass (JdbcOutboxStore: ClaimRows, each claim "
                + "carrying the previous one's stamps and their receipt NOTIFY), " + rows + "-row backlog, subjects split by hashtext over the clients, synchronous_commit="
                + ConnectionConfigKeys.DEFAULT_SYNCHRONOUS_COMMIT + " (the connector's default)");
            b.log("  %-34s %,9d rows in %6.2f s = %,7d rows/s", name, done.get(), seconds, (long) c.perSec());
            return c;
        } finally {
            b.postgres.dropDatabase(db);
        }
    }

    /** One session with the setting the connector's sessions run with by default. */
    private static HikariDataSource onePool(BenchDatabases.Db db) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setUsername("postgres");
        config.setMaximumPoolSize(1);
        config.setConnectionInitSql("SET synchronous_commit = " + ConnectionConfigKeys.DEFAULT_SYNCHRONOUS_COMMIT);
        return new HikariDataSource(config);
    }
}
