#!/usr/bin/env bash
# kubeadm's stacked control plane behind HAProxy while a third control-plane node joins the
# kubeadm way, with clients reading and writing through the balancer; run twice: the balancer
# checking the API server's /readyz only (baseline), and also the agent's /readyz. Counts the
# requests the joining node's API server served while its etcd was a learner or more than
# --max-lag-entries behind (its audit log against its agent's log), and the clients' errors and
# latency during the join. Real etcd 3.6 (kubeadm's flags and PKI layout), kube-apiserver
# (test-e2e/kube-bin.sh), HAProxy (test-e2e/haproxy-bin.sh) and the agent's jar, three network
# namespaces as nodes. Needs root (network namespaces, tc).
#
#   test-e2e/kubeadm-lb.sh               # full: 60 000 entries before the join, 40 requests/s
#   MODE=short test-e2e/kubeadm-lb.sh    # what ./mvnw verify runs (KubeadmLbE2E)
#
# Ends with one line `result: agent-gated=N baseline=M client-errors=E`, then the table; both
# are also in agent/target/kubeadm-lb/results-<mode>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${MODE:-full}
./mvnw -B -q -pl agent verify -Dspotless.check.skip=true -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=KubeadmLbE2E -Detcd.versions=3.6 \
  -Dkubeadm.mode="$MODE" > "${TMPDIR:-/tmp}/kubeadm-lb-$MODE.log" 2>&1 \
  || { tail -n 40 "${TMPDIR:-/tmp}/kubeadm-lb-$MODE.log"; exit 1; }
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
cat "agent/target/kubeadm-lb/results-$MODE.md"
