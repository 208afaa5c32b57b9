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

if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
  JAVA="$JAVA_HOME/bin/java"
elif command -v java >/dev/null 2>&1; then
  JAVA="$(command -v java)"
else
  echo "quickstart: no java found. Install a JDK 17 or newer and put it on PATH (or set JAVA_HOME)." >&2
  exit 1
fi
JAVA_VERSION="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
if [[ -z "$JAVA_VERSION" || "${JAVA_VERSION%%.*}" -lt 17 ]]; then
  echo "quickstart: $JAVA is Java ${JAVA_VERSION:-of unknown version}; the quickstart needs 17 or newer." >&2
  exit 1
fi

BUILD=1
ARGS=()
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
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
