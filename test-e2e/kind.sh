#!/usr/bin/env bash
# The chart on a real Kubernetes cluster made with kind: build the image, load it, install the
# chart with one member, scale to three, check that every member was promoted by its own agent and
# is a Ready voter, then roll every pod. Needs docker (with a running engine), kind, kubectl and
# helm. NOT part of CI: the development and CI machines of this project have no Docker engine; the
# same story runs there as StatefulSetE2E (processes in network namespaces, API stand-in).
#
#   test-e2e/kind.sh            # create (or reuse) the kind cluster "ema-e2e" and run the story
#   KEEP=1 test-e2e/kind.sh     # leave the cluster and release in place afterwards
set -euo pipefail

CLUSTER=${CLUSTER:-ema-e2e}
NS=${NS:-etcd}
IMAGE=${IMAGE:-etcd-member-agent:e2e}
PREFIX=etcd-member-agent.io
cd "$(dirname "$0")/.."

for tool in docker kind kubectl helm; do
  command -v "$tool" >/dev/null || { echo "kind.sh: needs $tool on PATH" >&2; exit 2; }
done
docker info >/dev/null 2>&1 || { echo "kind.sh: no Docker engine answers" >&2; exit 2; }

step() { printf '\n== %s\n' "$*"; }

step "build $IMAGE"
docker build -t "$IMAGE" .

step "kind cluster $CLUSTER"
kind get clusters | grep -qx "$CLUSTER" || kind create cluster --name "$CLUSTER" --wait 2m
kind load docker-image "$IMAGE" --name "$CLUSTER"
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -

chart() {
  helm upgrade --install etcd charts/etcd-member-agent -n "$NS" \
    --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" \
    --set image.pullPolicy=Never "$@"
}
ready() {
  kubectl -n "$NS" wait --for=condition="$PREFIX/ready" "pod/etcd-$1" --timeout=5m
}

step "one member"
chart --set replicas=1
ready 0

step "scale to three: each joins as a learner, its agent promotes it"
chart --reuse-values --set replicas=3
for i in 1 2; do
  until kubectl -n "$NS" get pod "etcd-$i" >/dev/null 2>&1; do sleep 2; done
  ready "$i"
done
members=$(kubectl -n "$NS" exec etcd-0 -c etcd -- etcdctl member list -w json)
learners=$(grep -o '"isLearner":true' <<<"$members" | wc -l)
echo "$members"
[ "$learners" -eq 0 ] || { echo "kind.sh: a learner is left" >&2; exit 1; }
promoted=$(kubectl -n "$NS" get events --field-selector reason=Promoted -o name | wc -l)
[ "$promoted" -ge 2 ] || { echo "kind.sh: expected 2 Promoted events, saw $promoted" >&2; exit 1; }
kubectl -n "$NS" get pods -o custom-columns='POD:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,VOTER:.status.conditions[?(@.type=="'"$PREFIX"'/voting-member")].status'

step "rolling restart"
kubectl -n "$NS" rollout restart statefulset/etcd
kubectl -n "$NS" rollout status statefulset/etcd --timeout=10m
for i in 0 1 2; do ready "$i"; done

step "done"
if [ -z "${KEEP:-}" ]; then
  helm uninstall etcd -n "$NS"
  kind delete cluster --name "$CLUSTER"
fi
