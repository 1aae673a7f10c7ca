#!/bin/sh
# The training run of the image's ahead-of-time cache (JEP 483/514/515): the agent does the work
# it does in a Pod, so the cache holds the classes, linkage and profiles of its real paths, then
# stops by itself and the JVM writes the cache. Run by the Dockerfile (with busybox and etcd
# mounted for that step only) and by the footprint benchmark, which measures the cache it makes.
#
#   aot-training.sh ETCD_BINARY AGENT_JAR CACHE_FILE JAVA [JVM_FLAG...]
#
# What the agent meets: a single etcd serving TLS with a certificate it trusts (etcd's
# --auto-tls) and the disk check on its data dir; /livez, /readyz, /status and /metrics fetched
# the whole time as a kubelet and Prometheus would; Kubernetes on (a kubeconfig whose server is
# that etcd, so the Pod read is a real TLS call through client-java that gets a 404). POSIX sh
# and wget only: busybox is enough. Ports: $TRAIN_PORTS (three, default 23790 23800 23791); the
# agent's log is kept at $TRAIN_LOG when set.
set -eu
[ $# -ge 4 ] || { echo "usage: $0 ETCD_BINARY AGENT_JAR CACHE_FILE JAVA [JVM_FLAG...]" >&2; exit 2; }
etcd_bin=$1 jar=$2 cache=$3
shift 3
set -- ${TRAIN_PORTS:-23790 23800 23791} "$@"
client_port=$1 peer_port=$2 http_port=$3
shift 3
work=$(mktemp -d)
etcd_pid=
cleanup() {
  [ -z "${TRAIN_LOG:-}" ] || cp "$work/agent.log" "$TRAIN_LOG" 2>/dev/null || true
  [ -z "$etcd_pid" ] || kill "$etcd_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$etcd_bin" --name train --data-dir "$work/etcd" --log-level error --auto-tls \
  --listen-client-urls "https://127.0.0.1:$client_port" \
  --advertise-client-urls "https://127.0.0.1:$client_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "train=http://127.0.0.1:$peer_port" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
cert="$work/etcd/fixtures/client/cert.pem"
tries=0
until [ -s "$cert" ]; do
  tries=$((tries + 1))
  if [ "$tries" -gt 300 ] || ! kill -0 "$etcd_pid" 2>/dev/null; then
    echo "etcd did not start for the training run:" >&2
    cat "$work/etcd.log" >&2
    exit 1
  fi
  sleep 0.1
done

cat >"$work/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: train
  cluster:
    server: https://127.0.0.1:$client_port
    certificate-authority: $cert
users:
- name: train
  user:
    token: training-run
contexts:
- name: train
  context: {cluster: train, user: train, namespace: train}
current-context: train
KUBECONFIG

"$@" -XX:AOTCacheOutput="$cache" -jar "$jar" run \
  --etcd-endpoint="https://127.0.0.1:$client_port" --cacert="$cert" \
  --data-dir="$work/etcd" --http-host=127.0.0.1 --http-port="$http_port" \
  --kube=on --kubeconfig="$work/kubeconfig" --pod-name=train --pod-namespace=train \
  --exit-after=8s >"$work/agent.log" 2>&1 &
agent_pid=$!
while kill -0 "$agent_pid" 2>/dev/null; do
  for path in livez readyz status metrics; do
    wget -q -O /dev/null "http://127.0.0.1:$http_port/$path" 2>/dev/null || true
  done
  sleep 0.2
done
status=0
wait "$agent_pid" || status=$?
if [ "$status" -ne 0 ] || [ ! -s "$cache" ]; then
  echo "the training run failed (exit $status):" >&2
  cat "$work/agent.log" >&2
  exit 1
fi
