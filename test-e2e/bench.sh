#!/usr/bin/env bash
# Benchmarks of etcd-member-agent: detection, promotion delay and wrongful promotions side by
# side with the peers' policies, load on etcd and the API server, HTTP latency under load,
# start-up and steady-state footprint (JDK 17 / 25, default / tuned flags, CDS archive).
# Real etcd 3.5 and the real jar, on this machine. Takes about 45 minutes in full mode.
#
#   test-e2e/bench.sh              # full: 5 runs per figure, 60 MB learner, 10 min steady window
#   RUNS=3 STEADY=300 test-e2e/bench.sh
#   MODE=smoke test-e2e/bench.sh   # what the default test run does (1 run, small data)
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
[ -n "${ONLY:-}" ] && args+=(-Dbench.only="$ONLY")   # detection,promotion,load,latency,scale,footprint
./mvnw -B -q -pl agent verify -Dspotless.check.skip=true -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=BenchmarkE2E -Detcd.versions=3.5 \
  "${args[@]}"
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
cat "agent/target/bench/results-$MODE.md"
