#!/usr/bin/env bash
# Benchmarks of etcd-member-agent: detection, promotion delay and wrongful promotions side by
# side with the peers' policies, load on etcd and the API server, HTTP latency under load,
# start-up and steady-state footprint (JDK 17 / 25, default / tuned flags, CDS archive).
# Real etcd 3.6 (the primary version) and the real jar, and the chart on the real node (kube-node.sh), on this machine. Takes about 65 minutes in full mode (20 of them the node).
#
#   test-e2e/bench.sh              # full: 5 runs per figure, 60 MB learner, 10 min steady window
#   RUNS=3 STEADY=300 test-e2e/bench.sh
#   MODE=smoke test-e2e/bench.sh   # what the default test run does (1 run, small data, no node part)
#   BEFORE=946eb2f ONLY=footprint,latency test-e2e/bench.sh   # "before" = the agent at that revision
#   PREVIOUS_JAR=old.jar ...      # a footprint row for that jar with the image's flags
#   ONLY=oldest-node test-e2e/bench.sh   # the chart's node tests on Kubernetes 1.35, the oldest claimed
#
# The tables are printed and written to agent/target/bench/results-<mode>.md; BENCHMARKS.md
# holds the last full run's tables with the machine they ran on.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${MODE:-full}
args=(-Dbench.mode="$MODE")
[ -n "${RUNS:-}" ] && args+=(-Dbench.runs="$RUNS")
[ -n "${STEADY:-}" ] && args+=(-Dbench.steadySeconds="$STEADY")
[ -n "${MEGABYTES:-}" ] && args+=(-Dbench.learnerMegabytes="$MEGABYTES")
# The "before" rows of footprint and latency: the agent built at git revision $BEFORE (a temporary
# worktree) or the jar $BEFORE_JAR; without either, "before" runs this build with the old flags.
if [ -n "${BEFORE:-}" ] && [ -z "${BEFORE_JAR:-}" ]; then
  tree=$(mktemp -d)
  git worktree add -q --detach "$tree" "$BEFORE"
  (cd "$tree" && ./mvnw -B -q -pl agent package -Dmaven.test.skip=true -Dspotless.check.skip=true \
    -Denforcer.skip)
  BEFORE_JAR="agent/target/etcd-member-agent-before.jar"
  mkdir -p agent/target && cp "$tree/agent/target/etcd-member-agent.jar" "$BEFORE_JAR"
  git worktree remove --force "$tree"
fi
[ -n "${BEFORE_JAR:-}" ] && args+=(-Dbench.beforeJar="$(realpath "$BEFORE_JAR")")
# One more footprint row: an earlier build of this round with the image's flags and its own cache.
[ -n "${PREVIOUS_JAR:-}" ] && args+=(-Dbench.previousJar="$(realpath "$PREVIOUS_JAR")")
# The node on the oldest Kubernetes minor the chart claims: its install, scaling and restarts.
if [ "${ONLY:-}" = oldest-node ]; then
  KUBE_MINOR=1.35 ./mvnw -B -q -pl agent verify -Dspotless.check.skip=true -Dtest=NoSuchTest \
    -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='ChartOnNodeE2E,NodeRestartsE2E,ScaleStepsOnNodeE2E'
  exit
fi
[ -n "${ONLY:-}" ] && args+=(-Dbench.only="$ONLY")   # detection,promotion,load,latency,secure,scale,footprint,node; tls (only when named)
./mvnw -B -q -pl agent verify -Dspotless.check.skip=true -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=BenchmarkE2E -Detcd.versions=3.6 \
  "${args[@]}"
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
cat "agent/target/bench/results-$MODE.md"
