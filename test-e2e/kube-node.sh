#!/usr/bin/env bash
# A single-node Kubernetes on this machine, built from official modules, for the chart's tests and
# for trying the chart by hand. Needs root (network namespaces, mounts, cgroups, iptables).
#
#   test-e2e/kube-node.sh up DIR      starts it; all state under DIR; prints the admin kubeconfig's
#                                     path on its last line
#   KUBE_MINOR=1.35 test-e2e/kube-node.sh up DIR   the same on another minor line with a module
#                                     under test-e2e/kube-go/ (default 1.36, the tested one)
#   test-e2e/kube-node.sh down DIR    stops it and removes what it made outside DIR (processes,
#                                     mounts, its network namespace, cgroups, the kernel sysctls
#                                     the kubelet changed are restored); DIR itself is left
# One node per machine: `up` first takes down a node that another DIR left up (a run killed
# before its `down`), as recorded in /run/ema-node.dir. `down` of a DIR that does not own the node
# up now changes nothing (exit 2).
#
# The parts: etcd 3.6 (etcd-bin.sh); kube-apiserver, kube-controller-manager (every controller,
# the PersistentVolume binder and garbage collector among them), kube-scheduler, kubelet, kube-proxy
# (iptables mode) and kubectl built from k8s.io/kubernetes (kube-bin.sh); containerd 2, runc, the
# CNI plugins, CoreDNS, local-path-provisioner, helm and crictl (node-bin.sh). The images (the
# agent's, etcd 3.5/3.6/3.7, pause, CoreDNS, local-path-provisioner, busybox) are made here and
# imported into containerd (node-images.sh); DIR/values-node.yaml holds their references and the
# storage class for `helm install -f`. DIR/bin has kubectl, helm and crictl; DIR/env sets
# KUBECONFIG, CRI_CONFIG_FILE (crictl.yaml) and PATH for them (`source DIR/env`).
#
# Network: the node lives in its own network namespace, $NETNS (as kind's node lives in its
# container): its bridge, the Pods' veths, its forwarding and br_netfilter sysctls, and every
# iptables chain of the kubelet, kube-proxy and the CNI plugins are there, and go with it on down.
# The host's forwarding, its filter and nat tables and its sysctls for them are never touched. The
# node's address is the bridge's, $NODE_IP; Pods get $POD_CIDR on it, Services $SERVICE_CIDR
# (kube-proxy, inside the namespace). The host reaches the API server and the Pods through one veth
# pair ($HOST_VETH, $HOST_LINK_IP, to the namespace's $NODE_LINK_IP) and one route ($POD_CIDR via
# it); nothing is masqueraded, and the namespace has no other route, so no traffic leaves the
# machine. Every process of the node (etcd, the control plane, containerd, the kubelet, kube-proxy)
# runs in the namespace (nsenter --net: the host's mounts and /sys stay theirs). CoreDNS answers
# the cluster domain only (no upstream).
# Exit status 2, with one line naming what is missing, when a part cannot be provided.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root_dir="$(cd "$here/.." && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
KUBE_MINOR=${KUBE_MINOR:-1.36}

NODE=ema-node
NETNS=ema-node
BRIDGE=ema-node0
HOST_VETH=ema-node-host
NODE_VETH=uplink
HOST_LINK_IP=10.216.0.1
NODE_LINK_IP=10.216.0.2
NODE_IP=10.214.0.1
POD_CIDR=10.214.0.0/24
SERVICE_CIDR=10.215.0.0/24
KUBERNETES_SERVICE_IP=10.215.0.1
DNS_IP=10.215.0.10
CGROUP_ROOT=ema-node
# which directory the node that is up lives in (one node per machine: the bridge's name is fixed):
# lines dir=, pid= (of the up that claimed it) and started=; written and read under LOCK (flock)
OWNER=/run/ema-node.dir
LOCK=/run/ema-node.lock
# the machine's sysctls, recorded once when a node first claims the machine, restored when the
# owner goes down: a dead run's leftovers are never taken for the originals
SYSCTLS_SAVED=/run/ema-node.sysctls
AGENT_IMAGE=localhost/etcd-member-agent:node
ETCD_REPOSITORY=localhost/etcd
PAUSE_VERSION=3.10.1
PAUSE_IMAGE=localhost/pause:$PAUSE_VERSION
BUSYBOX_IMAGE=localhost/busybox:node
# Directories outside DIR that the kubelet, libcni and containerd make (containerd's shim sockets
# and runc's state are always under /run/containerd): `up` records which exist before it, `down`
# removes the others. One list, so the two can never disagree.
OUTSIDE_DIRS=(/var/lib/kubelet /var/log/containers /var/lib/cni /run/containerd)
# what the kubelet sets on the host's kernel (not per network namespace)
KERNEL_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

die() { echo "kube-node.sh: $*" >&2; exit 2; }
say() { echo "kube-node.sh: $*" >&2; }

usage() { die "usage: kube-node.sh up|down DIR"; }

# Serialises up and down: the owner record is checked and written by one of them at a time.
lock() {
  exec 9>"$LOCK"
  flock -w 600 9 || die "another kube-node.sh held $LOCK for 10 minutes"
}

# The directory that owns the node up now ("" when none); an older record is the bare directory.
owner_dir() {
  [[ -f "$OWNER" ]] || return 0
  if grep -q '^dir=' "$OWNER"; then sed -n 's/^dir=//p' "$OWNER"; else head -n 1 "$OWNER"; fi
}

# in_node COMMAND...: runs it in the node's network namespace (only that namespace changes)
in_node() { nsenter --net="/run/netns/$NETNS" "$@"; }
[[ $# -eq 2 ]] || usage
cmd=$1
# up makes DIR; down never does (a mistyped DIR must change nothing)
[[ "$cmd" != up ]] || mkdir -p "$2"
[[ -d "$2" ]] || die "$2: no such directory: nothing changed"
dir=$(cd "$2" && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start NAME COMMAND...: runs it in the background in its own session, output in DIR/log/NAME.log,
# its PID in DIR/pids/NAME.
start() {
  local name=$1; shift
  setsid nsenter --net="/run/netns/$NETNS" "$@" >>"$dir/log/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

# await WHAT SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds, or dies naming WHAT.
# WHAT names a process started by start (or "the node ... Ready", which waits on the kubelet):
# when that process has died, await fails at once with its log's last line, not after LIMIT.
await() {
  local what=$1 limit=$2; shift 2
  local deadline=$((SECONDS + limit)) proc=$what
  [[ "$what" == "the node "* ]] && proc=kubelet
  until "$@" >/dev/null 2>&1; do
    if [[ -f "$dir/pids/$proc" ]] && ! alive "$proc"; then
      die "$proc exited while starting: $(tail -n 1 "$dir/log/$proc.log" 2>/dev/null)"
    fi
    if ((SECONDS >= deadline)); then die "$what did not come up within $limit s (logs in $dir/log)"; fi
    sleep 0.2 # the poll's period
  done
}

alive() { [[ -f "$dir/pids/$1" ]] && kill -0 "$(cat "$dir/pids/$1")" 2>/dev/null; }

# --- PKI ---------------------------------------------------------------------------------------
# issue NAME CN [O] [SANs]: an EC key and a certificate signed by the node's CA.
issue() {
  local name=$1 cn=$2 org=${3:-} sans=${4:-}
  local subj="/CN=$cn"
  [[ -z "$org" ]] || subj="/O=$org$subj"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  local ext="$pki/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [[ -n "$sans" ]]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$sans"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -extfile "$ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$ext"
}

kubeconfig() {
  local name=$1
  cat >"$dir/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NODE
  cluster: {server: "https://$NODE_IP:$api_port", certificate-authority: "$pki/ca.crt"}
users:
- name: $name
  user: {client-certificate: "$pki/$name.crt", client-key: "$pki/$name.key"}
contexts:
- name: $NODE
  context: {cluster: $NODE, user: $name}
current-context: $NODE
EOF
}

make_pki() {
  pki="$dir/pki"
  mkdir -p "$pki"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=$NODE-ca" -days 30 -out "$pki/ca.crt" 2>/dev/null
  issue apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$KUBERNETES_SERVICE_IP"
  issue apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  issue admin kube-node-admin system:masters
  issue kubelet "system:node:$NODE" system:nodes
  issue kube-proxy system:kube-proxy
  issue controller-manager system:kube-controller-manager
  issue scheduler system:kube-scheduler
  # the NetworkPolicy enforcer reads Pods, Namespaces, NetworkPolicies and its Node
  issue kube-router kube-router system:masters
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/sa.key" 2>/dev/null
  openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

# --- network -----------------------------------------------------------------------------------
save_sysctls() {
  [[ -f "$SYSCTLS_SAVED" ]] && return
  local s
  for s in "${KERNEL_SYSCTLS[@]}"; do
    [[ -f "/proc/sys/$s" ]] && echo "$s=$(cat "/proc/sys/$s")"
  done >"$SYSCTLS_SAVED"
}

restore_sysctls() {
  local saved=$SYSCTLS_SAVED
  # a node taken up before the record moved to /run kept it in its DIR
  [[ -f "$saved" ]] || saved="$dir/sysctls.saved"
  [[ -f "$saved" ]] || return 0
  local line
  while IFS= read -r line; do
    echo "${line#*=}" >"/proc/sys/${line%%=*}" 2>/dev/null || true
  done <"$saved"
  rm -f "$saved"
}

make_network() {
  ip netns add "$NETNS" 2>/dev/null || die "the network namespace $NETNS exists already: is another node up? (kube-node.sh down DIR)"
  ip link add "$HOST_VETH" type veth peer name "$NODE_VETH" netns "$NETNS" \
    || die "could not make the veth pair $HOST_VETH/$NODE_VETH"
  ip addr add "$HOST_LINK_IP/30" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  in_node ip link set lo up
  in_node ip addr add "$NODE_LINK_IP/30" dev "$NODE_VETH"
  in_node ip link set "$NODE_VETH" up
  in_node ip link add "$BRIDGE" type bridge
  in_node ip addr add "$NODE_IP/24" dev "$BRIDGE"
  in_node ip link set "$BRIDGE" up
  # the one route of the host: the API server (on the bridge's address) and the Pods
  ip route add "$POD_CIDR" via "$NODE_LINK_IP" dev "$HOST_VETH"
  # the namespace's own sysctls: it routes between the bridge and the host's link (and a Pod to a
  # Service another Pod backs), and bridged frames pass its iptables (kube-proxy's rules)
  in_node sh -c "echo 1 >/proc/sys/net/ipv4/ip_forward && echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables"
  mkdir -p "$dir/cni/net.d"
  cat >"$dir/cni/net.d/10-$NODE.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NODE",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": false, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$dir/cni/ipam",
              "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "${NODE_IP%.*}.10", "gateway": "$NODE_IP"}]],
              "routes": [{"dst": "0.0.0.0/0", "gw": "$NODE_IP"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# --- processes -----------------------------------------------------------------------------------
start_etcd() {
  local etcd_bin client peer
  etcd_bin=$("$here/etcd-bin.sh" 3.6) || die "no etcd 3.6 for the node"
  client=$(free_port); peer=$(free_port)
  etcd_url="http://127.0.0.1:$client"
  start etcd "$etcd_bin" --name "$NODE" --data-dir "$dir/etcd" --unsafe-no-fsync \
    --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "$NODE=http://127.0.0.1:$peer" --log-level warn
  await "etcd" 30 in_node curl -fsS "$etcd_url/health"
}

start_control_plane() {
  start kube-apiserver "$kube/kube-apiserver" \
    --etcd-servers="$etcd_url" --bind-address="$NODE_IP" --secure-port="$api_port" \
    --advertise-address="$NODE_IP" --service-cluster-ip-range="$SERVICE_CIDR" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --kubelet-preferred-address-types=InternalIP \
    --allow-privileged=true --profiling=false --cert-dir="$dir/apiserver-certs"
  await "kube-apiserver" 90 "$kube/kubectl" --kubeconfig="$dir/admin.kubeconfig" get --raw /readyz
  start kube-controller-manager "$kube/kube-controller-manager" \
    --kubeconfig="$dir/controller-manager.kubeconfig" --controllers='*' \
    --use-service-account-credentials=true --service-account-private-key-file="$pki/sa.key" \
    --root-ca-file="$pki/ca.crt" --cluster-signing-cert-file="$pki/ca.crt" \
    --cluster-signing-key-file="$pki/ca.key" --leader-elect=false --secure-port=0 \
    --concurrent-statefulset-syncs=2
  cat >"$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$dir/scheduler.kubeconfig"}
leaderElection: {leaderElect: false}
EOF
  start kube-scheduler "$kube/kube-scheduler" --config="$dir/kube-scheduler.yaml" \
    --bind-address=127.0.0.1 --secure-port="$(free_port)" \
    --authentication-kubeconfig="$dir/scheduler.kubeconfig" \
    --authorization-kubeconfig="$dir/scheduler.kubeconfig"
}

start_containerd() {
  mkdir -p "$dir/containerd"
  cat >"$dir/containerd/config.toml" <<EOF
version = 3
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins.'io.containerd.internal.v1.opt']
  path = "$dir/containerd/opt"
[plugins.'io.containerd.nri.v1.nri']
  socket_path = "$dir/containerd/nri.sock"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # root here lacks CAP_SYS_RESOURCE: runc cannot lower the sandbox's oom_score_adj to -998
  restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = "runc"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$bins/runc"
  SystemdCgroup = false
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ["$bins/cni"]
  conf_dir = "$dir/cni/net.d"
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
  start containerd env PATH="$bins:$PATH" "$bins/containerd" --config "$dir/containerd/config.toml"
  await "containerd" 30 "$bins/ctr" -a "$sock" version
}

import_images() {
  # shellcheck source=node-images.sh
  source "$here/node-images.sh"
  local jar="$root_dir/agent/target/etcd-member-agent.jar"
  [[ -f "$jar" ]] || die "no agent jar at $jar for the agent's image: build it first (./mvnw -pl agent package -DskipTests)"
  local images=() k line
  k=$(cat "$root_dir/Dockerfile" "$jar" "$root_dir/deploy/image/aot-training.sh" "$here/node-images.sh" | sha256sum | cut -c1-12)
  images+=("$(cached_image agent "$k" agent_image)")
  for line in 3.5 3.6 3.7; do
    images+=("$(cached_image "etcd-$line" "$(etcd_tag "$line")" etcd_image "$line")")
  done
  images+=("$(cached_image pause "$PAUSE_VERSION" pause_image)")
  images+=("$(cached_image busybox "$(sha256sum <"$bins/busybox" | cut -c1-12)" busybox_image)")
  images+=("$(cached_image coredns "$(sha256sum <"$bins/coredns" | cut -c1-12)" \
    static_image "$COREDNS_IMAGE" '["/coredns"]' 0 "$bins/coredns:/coredns")")
  images+=("$(cached_image local-path "$(sha256sum <"$bins/local-path-provisioner" | cut -c1-12)" \
    static_image "$LOCAL_PATH_IMAGE" '["/usr/bin/local-path-provisioner"]' 0 \
    "$bins/local-path-provisioner:/usr/bin/local-path-provisioner")")
  local i
  for i in "${images[@]}"; do
    "$bins/ctr" -a "$sock" -n k8s.io images import --no-unpack=false "$i" >/dev/null \
      || die "ctr could not import $i"
  done
}

start_kubelet() {
  mkdir -p "$dir/kubelet" "$dir/log/pods" "$dir/kubelet-plugins"
  local d
  for d in /sys/fs/cgroup/*/; do
    [[ -d "$d" && ! -L "${d%/}" ]] && mkdir -p "$d$CGROUP_ROOT"
  done
  : >"$dir/resolv.conf"
  kubelet_port=$(free_port)
  cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
containerRuntimeEndpoint: unix://$sock
address: $NODE_IP
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $(free_port)
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization: {mode: Webhook}
clusterDNS: ["$DNS_IP"]
clusterDomain: cluster.local
resolvConf: "$dir/resolv.conf"
podLogsDir: "$dir/log/pods"
volumePluginDir: "$dir/kubelet-plugins"
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
EOF
  start kubelet "$kube/kubelet" --config="$dir/kubelet.yaml" --kubeconfig="$dir/kubelet.kubeconfig" \
    --root-dir="$dir/kubelet" --cert-dir="$dir/kubelet/pki" --hostname-override="$NODE" \
    --node-ip="$NODE_IP" --v=1
  await "the node $NODE Ready" 120 node_ready
}

node_ready() {
  [[ "$("$kube/kubectl" --kubeconfig="$dir/admin.kubeconfig" get node "$NODE" \
      -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

start_kube_proxy() {
  cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$dir/kube-proxy.kubeconfig"}
hostnameOverride: $NODE
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$(free_port)
metricsBindAddress: 127.0.0.1:$(free_port)
nodePortAddresses: ["$NODE_IP/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy env PATH="$bins:$PATH" "$kube/kube-proxy" --config="$dir/kube-proxy.yaml" --v=1
}

# The NetworkPolicy enforcer: kube-router's network-policy controller alone (no routing, no service
# proxy: the bridge plugin and kube-proxy do those), in the node's namespace like kube-proxy, with
# its iptables chains and ipsets there too. Pods that no policy selects keep all their traffic.
start_netpol() {
  start kube-router env PATH="$netpol:$bins:$PATH" "$netpol/kube-router" \
    --kubeconfig="$dir/kube-router.kubeconfig" --hostname-override="$NODE" \
    --run-firewall=true --run-router=false --run-service-proxy=false \
    --service-cluster-ip-range="$SERVICE_CIDR" --health-port="$(free_port)" --metrics-port=0 --v=1
  # its first sync made its chains: from then on a policy is enforced within one sync
  await "kube-router" 60 in_node "$bins/iptables" -w -S KUBE-NWPLCY-DEFAULT
}

# --- add-ons -------------------------------------------------------------------------------------
apply_addons() {
  local k=("$kube/kubectl" --kubeconfig="$dir/admin.kubeconfig")
  sed -e "s#@DNS_IP@#$DNS_IP#g" -e "s#@COREDNS_IMAGE@#$COREDNS_IMAGE#g" \
      -e "s#@LOCAL_PATH_IMAGE@#$LOCAL_PATH_IMAGE#g" -e "s#@BUSYBOX_IMAGE@#$BUSYBOX_IMAGE#g" \
      -e "s#@VOLUMES@#$dir/volumes#g" "$here/kube-node-addons.yaml" >"$dir/addons.yaml"
  mkdir -p "$dir/volumes"
  "${k[@]}" apply --server-side -f "$dir/addons.yaml" >/dev/null
  "${k[@]}" -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null \
    || die "CoreDNS did not become ready (kubectl -n kube-system describe pods)"
  "${k[@]}" -n local-path-storage rollout status deployment/local-path-provisioner --timeout=120s >/dev/null \
    || die "local-path-provisioner did not become ready"
}

write_values() {
  cat >"$dir/values-node.yaml" <<EOF
# The images this node holds (imported, never pulled) and its storage class; everything else is
# the chart's default. helm install RELEASE charts/etcd-member-agent -f $dir/values-node.yaml
image: {repository: ${AGENT_IMAGE%:*}, tag: "${AGENT_IMAGE##*:}", pullPolicy: IfNotPresent}
etcd:
  image: {repository: $ETCD_REPOSITORY, tag: "$(etcd_tag 3.6)", pullPolicy: IfNotPresent}
  storage: {storageClassName: local-path}
EOF
  {
    echo "# etcd images on this node, by line: helm upgrade --set etcd.image.tag=<tag>"
    local line
    for line in 3.5 3.6 3.7; do echo "# $line: $(etcd_tag "$line")"; done
  } >>"$dir/values-node.yaml"
}

up() {
  [[ $EUID -eq 0 ]] || die "needs root (network namespaces, mounts, cgroups, iptables)"
  [[ ! -f "$dir/pids/kubelet" ]] || ! alive kubelet || die "a node is already up in $dir"
  # a node left up by a run that died (its JVM killed before its down): take it down first
  local stale
  stale=$(owner_dir)
  if [[ -n "$stale" && "$stale" != "$dir" && -d "$stale" ]]; then
    say "a node left up in $stale: taking it down first"
    "$0" down "$stale" || die "could not take down the node left up in $stale"
  elif [[ -n "$stale" && "$stale" != "$dir" ]]; then
    say "the owner record names $stale, which is gone: forgetting it"
    rm -f "$OWNER"
  fi
  lock
  local t0=$SECONDS
  # the kubelet here runs with cgroupfs on cgroup v1 controllers (this machine's kind); a host with
  # cgroup v2 only (most current distributions) cannot run it, and that is not proven here
  [[ -d /sys/fs/cgroup/memory && -d /sys/fs/cgroup/cpu ]] \
    || die "cgroup v2 only on this host: the node runs on cgroup v1 controllers (memory, cpu) and has not been made to run on v2"
  command -v openssl >/dev/null || die "openssl is missing"
  command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
  command -v python3 >/dev/null || die "python3 is missing"
  command -v nsenter >/dev/null || die "nsenter is missing (util-linux)"
  [[ -d /proc/sys/net/bridge ]] || die "br_netfilter is not loaded (modprobe br_netfilter): kube-proxy's rules must see the bridged traffic of Pods"
  kube=$("$here/kube-bin.sh" "$KUBE_MINOR" node) || die "no Kubernetes binaries (kube-bin.sh $KUBE_MINOR node)"
  bins=$("$here/node-bin.sh") || die "no node parts (node-bin.sh)"
  netpol=$("$here/netpol-bin.sh") || die "no NetworkPolicy enforcer (netpol-bin.sh)"
  COREDNS_IMAGE=localhost/coredns:$(sed -n 's#^[[:space:]]*github.com/coredns/coredns \(v[^ ]*\).*#\1#p' "$here/node-go/coredns/go.mod")
  LOCAL_PATH_IMAGE=localhost/local-path-provisioner:$(sed -n 's#^[[:space:]]*github.com/rancher/local-path-provisioner \(v[^ ]*\).*#\1#p' "$here/node-go/local-path/go.mod")
  local built=$((SECONDS - t0))
  mkdir -p "$dir/log" "$dir/pids" "$dir/bin"
  printf 'kube=%s\nbins=%s\nnetpol=%s\n' "$kube" "$bins" "$netpol" >"$dir/parts"
  [[ -z "$(owner_dir)" ]] || die "$(owner_dir) owns the node up now: take it down first (kube-node.sh down $(owner_dir))"
  printf 'dir=%s\npid=%s\nstarted=%s\n' "$dir" "$$" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$OWNER"
  local d
  for d in "${OUTSIDE_DIRS[@]}"; do
    [[ -e "$d" ]] && echo "$d"
  done >"$dir/preexisting"
  # claimed: the lock is released before any process starts, so none of them inherits it
  exec 9>&-
  sock="$dir/containerd/containerd.sock"
  api_port=$(free_port)
  save_sysctls
  make_pki
  local n
  for n in admin kubelet kube-proxy controller-manager scheduler kube-router; do kubeconfig "$n"; done
  make_network
  start_etcd
  start_control_plane
  start_containerd
  local t1=$SECONDS
  import_images
  local imported=$((SECONDS - t1))
  start_kubelet
  start_kube_proxy
  start_netpol
  apply_addons
  write_values
  ln -sf "$kube/kubectl" "$dir/bin/kubectl"
  ln -sf "$bins/helm" "$dir/bin/helm"
  ln -sf "$bins/crictl" "$dir/bin/crictl"
  printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 10\n' "$sock" "$sock" >"$dir/crictl.yaml"
  cat >"$dir/env" <<EOF
export KUBECONFIG="$dir/admin.kubeconfig"
export CRI_CONFIG_FILE="$dir/crictl.yaml"
export PATH="$dir/bin:\$PATH"
EOF
  say "up in $((SECONDS - t0)) s (parts ready in $built s, images in $imported s); source $dir/env for kubectl, helm and crictl"
  echo "$dir/admin.kubeconfig"
}

# --- down ------------------------------------------------------------------------------------------
stop() {
  local name=$1 pid i
  [[ -f "$dir/pids/$name" ]] || return 0
  pid=$(cat "$dir/pids/$name")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/pids/$name"
}

down() {
  [[ $EUID -eq 0 ]] || die "needs root"
  lock
  # only the owner takes the node down: a mistyped DIR must never stop another run's node
  local owner
  owner=$(owner_dir)
  if [[ -n "$owner" && "$owner" != "$dir" ]]; then
    die "$dir does not own the node up now ($owner does): nothing changed"
  fi
  [[ -f "$dir/parts" ]] || die "$dir holds no node (no $dir/parts): nothing changed"
  bins=$(sed -n 's/^bins=//p' "$dir/parts" 2>/dev/null || true)
  stop kube-router
  stop kube-proxy
  stop kubelet
  # every container and sandbox: the shims outlive containerd
  if [[ -x "$bins/crictl" && -S "$dir/containerd/containerd.sock" ]]; then
    local c="$bins/crictl --runtime-endpoint unix://$dir/containerd/containerd.sock --timeout 10s"
    $c rmp -fa >/dev/null 2>&1 || true
  fi
  pkill -KILL -f "containerd-shim-runc-v2 .*-address $dir/containerd/" 2>/dev/null || true
  local p
  for p in kube-scheduler kube-controller-manager kube-apiserver containerd etcd; do stop "$p"; done
  # what the runtime left: container processes whose shim was killed, then mounts under DIR
  local cg
  for cg in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [[ -d "$cg" ]] || continue
    find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  local m d
  for m in $(awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  for m in $(awk '$2 ~ "^/run/netns/cni-" {print $2}' /proc/self/mounts); do
    umount -l "$m" 2>/dev/null || true; rm -f "$m"
  done
  # cgroups, deepest first
  for cg in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [[ -d "$cg" ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  # network: the namespace takes its bridge, the Pods' veths and every iptables chain the kubelet,
  # kube-proxy and the CNI plugins made with it; the host's veth (and so its route) goes with its
  # peer, and is deleted here too in case the namespace was gone already
  ip netns del "$NETNS" 2>/dev/null || true
  ip link del "$HOST_VETH" 2>/dev/null || true
  restore_sysctls
  # written outside DIR by the kubelet and libcni: removed where the node made them
  find /var/log/containers -maxdepth 1 -lname "$dir/*" -delete 2>/dev/null || true
  rm -f /var/lib/cni/results/"$NODE"-* 2>/dev/null || true
  # made by the kubelet, libcni and containerd (its shims' sockets and runc's state are always
  # under /run/containerd) only if up found them missing (recorded in DIR/preexisting)
  if [[ -f "$dir/preexisting" ]]; then
    for d in "${OUTSIDE_DIRS[@]}"; do
      grep -qx "$d" "$dir/preexisting" || rm -rf "$d"
    done
  fi
  rm -rf "$dir/pids"
  [[ "$(owner_dir)" != "$dir" ]] || rm -f "$OWNER"
  say "down: $dir stopped and cleaned (its files stay)"
}

# A failing up leaves nothing behind: its own down runs (exit 2 stays the failure's status).
up_or_clean() {
  trap 'status=$?; exec 9>&-; if ((status != 0)) && [[ "$(owner_dir)" == "$dir" ]]; then say "up failed: taking down what it made"; "$0" down "$dir" >&2 || true; fi; exit $status' EXIT
  up
  trap - EXIT
}

case "$cmd" in
  up) up_or_clean ;;
  down) down ;;
  *) usage ;;
esac
