# Sourced by quickstart.sh and bench.sh: find_java NAME sets JAVA to a java 17 or newer, from
# JAVA_HOME or the PATH, or exits with a message that says what to install.
find_java() {
  local name="$1" version
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    JAVA="$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then
    JAVA="$(command -v java)"
  else
    echo "$name: no java found. Install a JDK 17 or newer and put it on PATH (or set JAVA_HOME)." >&2
    exit 1
  fi
  version="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  if [[ -z "$version" || "${version%%.*}" -lt 17 ]]; then
    echo "$name: $JAVA is Java ${version:-of unknown version}; $name needs 17 or newer." >&2
    exit 1
  fi
}
