package io.outboxrelay.bench;

import static io.outboxrelay.bench.Fixtures.drain;
import static io.outboxrelay.bench.Fixtures.sustainable;
import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The charts are drawn from a run's results: each PNG is written and shows its series' colours. */
class ChartsTest {
    private static final int RELAY_BLUE = 0x1f77b4;
    private static final int DEBEZIUM_RED = 0xd62728;

    @TempDir
    Path dir;

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    private static Results results() {
        Results r = new Results();
        r.volumes.put("drainEvents", 200_000);
        r.drains.add(drain("relay", "", 2, 200_000, 30_000, 200, 30));
        r.drains.add(drain("debezium", "", 1, 200_000, 25_000, 300, 30));
        r.ceilings.add(new Results.Ceiling("SQL claim+stamp, 1 client, batch 200", "rows/s", 200_000, 6, 32_000, ""));
        r.latency.add(Fixtures.latency("relay", "", 1000, 1000, 60_000, 60_000, 12));
        r.latency.add(Fixtures.latency("debezium", "", 1000, 1000, 60_000, 60_000, 800));
        r.scale.add(drain("relay", "", 1, 20_000, 25_000, 90, 25));
        r.scale.add(drain("relay", "", 1, 1_000_000, 22_000, 900, 27));
        r.sustainable.add(sustainable("relay", "", 5, 6, 8, 10, 20, 400, 500));
        r.sustainable.add(sustainable("debezium", "", 800, 810));
        return r;
    }

    private static boolean shows(BufferedImage img, int rgb) {
        for (int x = 0; x < img.getWidth(); x++) {
            for (int y = 0; y < img.getHeight(); y++) {
                if ((img.getRGB(x, y) & 0xffffff) == rgb) {
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void everyChartIsWrittenWithTheRelayAndDebeziumInTheirColours() throws Exception {
        Results r = results();
        Charts.throughput(r, dir.resolve("throughput.png"));
        Charts.latencyCdf(r, dir.resolve("latency-cdf.png"));
        Charts.sustainable(r, dir.resolve("sustainable.png"));
        Charts.scale(r, dir.resolve("scale.png"));

        for (String f : new String[] {"throughput.png", "latency-cdf.png", "sustainable.png"}) {
            BufferedImage img = ImageIO.read(dir.resolve(f).toFile());
            assertThat(img.getWidth()).as(f).isGreaterThan(600);
            assertThat(shows(img, RELAY_BLUE)).as(f + " draws the relay").isTrue();
            assertThat(shows(img, DEBEZIUM_RED)).as(f + " draws Debezium").isTrue();
        }
        BufferedImage scale = ImageIO.read(dir.resolve("scale.png").toFile());
        assertThat(shows(scale, RELAY_BLUE)).isTrue();
        assertThat(shows(scale, DEBEZIUM_RED)).as("the relay alone").isFalse();
    }

    @Test
    void theSteadyChartStacksPostgresTheWorkerAndTheBrokerPerContender() throws Exception {
        Results r = new Results();
        r.steadyCosts.add(Fixtures.steadyCost("relay", "", "events", 500, 100, 120, 40, 0));
        r.steadyCosts.add(Fixtures.steadyCost("debezium", DebeziumContender.TUNED_VARIANT, "events", 500, -5, 200, 40,
            0));
        r.steadyCosts.add(Fixtures.steadyCost("relay", "", "events+10-updates", 2000, 60, 100, 30, 0));
        Path file = dir.resolve("steady.png");

        SteadyChart.draw(r, file);

        BufferedImage img = ImageIO.read(file.toFile());
        assertThat(img.getHeight()).as("one panel per workload, stacked").isGreaterThan(800);
        for (java.awt.Color c : new java.awt.Color[] {SteadyChart.POSTGRES, SteadyChart.WORKER, SteadyChart.BROKER}) {
            assertThat(shows(img, c.getRGB() & 0xffffff)).as(c.toString()).isTrue();
        }
        assertThat(SteadyChart.shortName(r.steadyCosts.get(1))).isEqualTo("Debezium tuned");
    }

    @Test
    void barsWithTheSameLabelKeepABarEach() {
        assertThat(Charts.unique(java.util.List.of("a", "b", "a", "a"))).containsExactly("a", "b", "a #2", "a #3");
    }

    @Test
    void theNinesAxisLabelsOnlyTheNines() {
        assertThat(Charts.ninesLabel(0)).isEqualTo("p0");
        assertThat(Charts.ninesLabel(1)).isEqualTo("p90");
        assertThat(Charts.ninesLabel(2)).isEqualTo("p99");
        assertThat(Charts.ninesLabel(3)).isEqualTo("p99.9");
        assertThat(Charts.ninesLabel(2.5)).isEmpty();
    }
}
