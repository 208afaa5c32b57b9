#!/usr/bin/env bash
# Outbox Relay quickstart: one command, nothing to install but a JDK 17+.
#
#   ./quickstart.sh                    run until Ctrl-C
#   ./quickstart.sh --duration=30      stop by itself after 30 s
#   ./quickstart.sh --rate=1000        demo events per second (default 200)
#   ./quickstart.sh --no-build         skip the Maven build (after a first run)
#
# Builds the connector and the quickstart module with the Maven wrapper, then starts PostgreSQL, a
# Kafka broker and a Kafka Connect worker inside one JVM, registers the connector from
# config-examples/quickstart.json and shows events flowing. Ctrl-C stops and deletes everything.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

# shellcheck source=scripts/find-java.sh
. "$ROOT/scripts/find-java.sh"
find_java quickstart

BUILD=1
ARGS=()
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    --help|-h)
      # the usage text lives in one place, the Java options parser; print it without building anything
      sed -n '/USAGE = """/,/""";/{//!p}' "$ROOT/quickstart/src/main/java/io/outboxrelay/quickstart/QuickstartOptions.java" \
        | sed 's/^        //'
      exit 0 ;;
    *) ARGS+=("$arg") ;;
  esac
done

LIB="$ROOT/quickstart/target/quickstart/lib"
if [[ "$BUILD" == 1 || ! -d "$LIB" ]]; then
  echo "Building the connector and the quickstart (the first run downloads Maven and the dependencies," \
       "a few minutes; later runs take about half a minute) ..."
  # tests are not compiled or run here: ./mvnw verify is the place for them
  ./mvnw -B -q -ntp -Dmaven.test.skip=true -pl quickstart -am package
fi

exec "$JAVA" \
  -Dquickstart.home="$ROOT" \
  -Dquickstart.log="$ROOT/quickstart/target/quickstart.log" \
  -cp "$LIB/*" \
  io.outboxrelay.quickstart.Quickstart ${ARGS[@]+"${ARGS[@]}"}
