#!/usr/bin/env bash
# Outbox Relay benchmark: one command, nothing to install but a JDK 17+.
#
#   ./bench.sh                 full run (about 70 minutes on 2 cores): results in bench/results/
#   ./bench.sh --quick         smoke test with small volumes (about 14 minutes): bench/target/quick-results/
#   ./bench.sh --quick --phases=writers   the writer ceiling alone (durable commits/s per wake-up)
#   ./bench.sh --quick --phases=sustainable   the highest commit rate each contender keeps up with
#   ./bench.sh --quick --phases=steady   CPU per event at fixed commit rates, over the writers alone
#   ./bench.sh --no-build ...  skip the Maven build (after a first run)
#   ./bench.sh --help          every option (phases, --no-debezium, --out=DIR, --worker-heap=SIZE, --wakeup,
#                              --relay-variant, --sustainable-rates, --steady-rates, --steady-seconds,
#                              --steady-rounds)
#
# Builds the project with the Maven wrapper, then starts PostgreSQL 17 (embedded binaries), a Kafka
# broker and a Kafka Connect worker (its own JVM) on loopback, and measures the relay against
# Debezium's outbox EventRouter on the same database, broker and worker. See bench/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

# shellcheck source=scripts/find-java.sh
. "$ROOT/scripts/find-java.sh"
find_java bench

BUILD=1
QUICK=0
OUT_SET=0
ARGS=()
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    --quick) QUICK=1; ARGS+=("$arg") ;;
    --out=*) OUT_SET=1; ARGS+=("$arg") ;;
    *) ARGS+=("$arg") ;;
  esac
done
# a quick run never overwrites the committed full-run results
if [[ "$QUICK" == 1 && "$OUT_SET" == 0 ]]; then
  ARGS+=("--out=$ROOT/bench/target/quick-results")
fi

LIB="$ROOT/bench/target/bench/lib"
if [[ "$BUILD" == 1 || ! -d "$LIB" ]]; then
  echo "Building (the first run downloads Maven and the dependencies, a few minutes) ..."
  ./mvnw -B -q -DskipTests install
fi

mkdir -p "$ROOT/bench/target"
exec "$JAVA" -Xms2g -Xmx4g -XX:+UseG1GC \
  -Dbench.home="$ROOT" \
  -Dbench.log="$ROOT/bench/target/bench.log" \
  -cp "$LIB/*" \
  io.outboxrelay.bench.Benchmark ${ARGS[@]+"${ARGS[@]}"}
