#!/usr/bin/env bash
# The agent's story on one machine, narrated as it happens:
# a 3-member etcd cluster with an agent next to each member, some data, then a new member:
# `join` adds it as a learner and writes its env file, its etcd starts from that file, and its
# own agent watches it: not started -> learner catching up -> caught up -> promoted -> ready,
# kept out of traffic by /readyz until it is a voter.
# It runs what the chart runs by default: etcd's peer and client traffic in TLS with client
# certificates (a CA and certificates made here with openssl, as the chart's `join` makes them in a
# cluster), and the agent serving HTTPS; without an API server, its /metrics and /status take a
# client certificate of that CA instead of a Kubernetes token.
#
#   test-e2e/demo.sh            (etcd 3.6; ETCD_VERSION=3.7|3.5|3.4 chooses another; DEMO_KEYS=n for more data)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version="${ETCD_VERSION:-3.6}"
unset ETCD_VERSION # etcd reads ETCD_* variables as its flags: 3.4 refuses this one as --version
keys="${DEMO_KEYS:-40}"
work=$(mktemp -d "${TMPDIR:-/tmp}/etcd-member-agent-demo.XXXXXX")
pids=()

cleanup() {
  local status=$?
  if (( status != 0 )); then
    echo "demo failed; the last lines of each log:" >&2
    for log in "$work"/*.log; do echo "== $log" >&2; tail -n 5 "$log" >&2; done
  fi
  for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

t0=$(date +%s%N)
say() { printf '[%6.2fs] %s\n' "$(( ($(date +%s%N) - t0) / 10000000 ))e-2" "$*"; }

taken=" "
# Ports come from below the kernel's ephemeral range: a port from that range that is free now
# can become the source port of an outgoing connection before etcd binds it.
ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
(( ephemeral_low > 12000 )) || ephemeral_low=32768
free_port() { # a port nothing listens on and not handed out before (sets $port)
  while :; do
    port=$(( 10000 + RANDOM % (ephemeral_low - 10000) ))
    [[ "$taken" == *" $port "* ]] && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    taken+="$port "
    return
  done
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    if (( $(date +%s) > deadline )); then say "gave up waiting for $what"; exit 1; fi
    sleep 0.1
  done
}

field() { # field JSON NAME -> first string/number value of "NAME"
  sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$1" | head -n1
}

jar="$root/agent/target/etcd-member-agent.jar"
if [[ ! -f "$jar" ]]; then
  say "building the agent jar (once)"
  (cd "$root" && ./mvnw -q -B package -DskipTests -Dspotless.check.skip=true)
fi
etcd=$("$here/etcd-bin.sh" "$version")
say "etcd: $("$etcd" --version | head -n1)"
command -v openssl >/dev/null || { echo "demo.sh: the certificates are made with openssl, and there is none on PATH" >&2; exit 2; }

pki="$work/pki"
mkdir -p "$pki"
issue() { # issue NAME EXTENDED_KEY_USAGE: a P-256 key and a certificate for 127.0.0.1 signed by the CA
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=demo-$1" \
    -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>>"$work/openssl.log"
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=%s\n' "$2" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>>"$work/openssl.log"
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
  -subj "/CN=demo etcd CA" -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>>"$work/openssl.log"
issue peer serverAuth,clientAuth     # every member's peer port, and its calls to the others
issue server serverAuth,clientAuth   # the client ports (and the agents' HTTPS)
issue client clientAuth              # the agents, join and this script's own calls
say "made a CA and peer, server and client certificates (openssl, EC P-256)"
# the client certificate's flags, named alike by curl, the agent and join
tls_client=(--cacert "$pki/ca.crt" --cert "$pki/client.crt" --key "$pki/client.key")
# every call to etcd or to an agent's /metrics and /status shows the client certificate; the
# probes' paths (/readyz, /livez) and the refused call do not
tcurl() { curl -s "${tls_client[@]}" "$@"; }
acurl() { curl -s --cacert "$pki/ca.crt" "$@"; }
etcd_tls=(--cert-file "$pki/server.crt" --key-file "$pki/server.key" --client-cert-auth
  --trusted-ca-file "$pki/ca.crt" --peer-cert-file "$pki/peer.crt" --peer-key-file "$pki/peer.key"
  --peer-client-cert-auth --peer-trusted-ca-file "$pki/ca.crt")

declare -A client peer http
for m in m0 m1 m2 m3; do
  free_port; client[$m]=$port; free_port; peer[$m]=$port; free_port; http[$m]=$port
done
initial="m0=https://127.0.0.1:${peer[m0]},m1=https://127.0.0.1:${peer[m1]},m2=https://127.0.0.1:${peer[m2]}"

start_etcd() { # start_etcd NAME INITIAL_CLUSTER STATE
  "$etcd" --name "$1" --data-dir "$work/$1.etcd" --logger zap \
    --listen-client-urls "https://127.0.0.1:${client[$1]}" --advertise-client-urls "https://127.0.0.1:${client[$1]}" \
    --listen-peer-urls "https://127.0.0.1:${peer[$1]}" --initial-advertise-peer-urls "https://127.0.0.1:${peer[$1]}" \
    --initial-cluster "$2" --initial-cluster-state "$3" --initial-cluster-token demo "${etcd_tls[@]}" \
    >"$work/$1.etcd.log" 2>&1 &
  pids+=($!)
}

start_agent() { # start_agent NAME [FLAGS...]
  local name=$1; shift
  java -jar "$jar" run --etcd-endpoint "https://127.0.0.1:${client[$name]}" "${tls_client[@]}" \
    --peer-cacert "$pki/ca.crt" --peer-cert "$pki/peer.crt" \
    --https-cert-file "$pki/server.crt" --https-key-file "$pki/server.key" --https-client-ca-file "$pki/ca.crt" \
    --http-host 127.0.0.1 --http-port "${http[$name]}" --poll-interval 200ms "$@" \
    >"$work/$name.agent.log" 2>&1 &
  pids+=($!)
}

checks_of() { # the checks of a /status document, in /readyz style
  grep -o '{"name":"[^"]*","passed":[a-z]*,"reason":"[^"]*","message":"[^"]*"}' <<<"$1" \
    | sed -E 's/^\{"name":"([^"]*)","passed":true.*/[+]\1 ok/; s/^\{"name":"([^"]*)","passed":false,"reason":"[^"]*","message":"([^"]*)"\}/[-]\1 failed: \2/'
}

ready() { [[ $(acurl -o /dev/null -w '%{http_code}' "https://127.0.0.1:${http[$1]}/readyz") == 200 ]]; }

say "starting a 3-member etcd $version cluster, an agent next to each member"
for m in m0 m1 m2; do start_etcd "$m" "$initial" new; done
for m in m0 m1 m2; do start_agent "$m"; done
for m in m0 m1 m2; do wait_for 60 "agent $m ready" ready "$m"; done
say "all three voters ready; m1 says:"
acurl "https://127.0.0.1:${http[m1]}/readyz?verbose" | sed 's/^/           /'

say "writing $keys keys of 768 KiB, so that a new member has something to catch up on"
value=$(head -c 786432 /dev/urandom | base64 -w0)
for i in $(seq 1 "$keys"); do
  k=$(printf 'demo/%06d' "$i" | base64 -w0)
  printf '{"key":"%s","value":"%s"}' "$k" "$value" >"$work/put.json"
  tcurl -o /dev/null -X POST "https://127.0.0.1:${client[m0]}/v3/kv/put" --data-binary "@$work/put.json"
done
voters="https://127.0.0.1:${client[m0]},https://127.0.0.1:${client[m1]},https://127.0.0.1:${client[m2]}"
say "done; m3's init container: etcd-member-agent join (adds m3 as a learner, writes its env file)"
java -jar "$jar" join --name m3 --peer-urls "https://127.0.0.1:${peer[m3]}" \
  --client-urls "https://127.0.0.1:${client[m3]}" --cluster-endpoints "$voters" "${tls_client[@]}" \
  --data-dir "$work/m3.etcd" --env-file "$work/m3.env" 2>&1 | sed 's/^/           /'
sed 's/^/           /' "$work/m3.env"

# Five stable polls (1 s at the learner's 200 ms) keep the learner phase long enough to show;
# the default (2) promotes within 400 ms of catching up.
start_agent m3 --cluster-endpoints "$voters" --peer-urls "https://127.0.0.1:${peer[m3]}" \
  --max-lag-entries 50 --promote-stable-polls 5
first_verdict() {
  local s
  s=$(tcurl -f "https://127.0.0.1:${http[m3]}/status") && [[ "$s" != *'"state":"Starting"'* ]]
}
wait_for 30 "agent m3's first verdict" first_verdict
status=$(tcurl "https://127.0.0.1:${http[m3]}/status")
say "m3's agent, before its etcd runs: state $(field "$status" state)"
acurl "https://127.0.0.1:${http[m3]}/readyz/voter" | sed 's/^/           /'

say "starting m3's etcd from the env file (as the etcd container does: set -a; . env; exec etcd)"
(
  set -a; . "$work/m3.env"; set +a
  exec "$etcd" --logger zap --listen-client-urls "https://127.0.0.1:${client[m3]}" \
    --listen-peer-urls "https://127.0.0.1:${peer[m3]}" "${etcd_tls[@]}" >"$work/m3.etcd.log" 2>&1
) &
pids+=($!)

last=""
shown_learner=""
deadline=$(( $(date +%s) + 120 ))
while (( $(date +%s) < deadline )); do
  status=$(tcurl "https://127.0.0.1:${http[m3]}/status" || true)
  state=$(field "$status" state)
  lag=$(field "$status" lag); [[ "$lag" == null ]] && lag=""
  insync=$(grep -o '"name":"in-sync","passed":[a-z]*' <<<"$status" | sed 's/.*://')
  line="state=$state lag=${lag:-unknown} in-sync=${insync:-unknown}"
  if [[ "$line" != "$last" ]]; then say "m3: $line"; last=$line; fi
  if [[ "$state" == "Learner" && -z "$shown_learner" ]]; then
    shown_learner=1
    say "m3 is a learner: readiness keeps traffic away from it (its checks in that poll):"
    checks_of "$status" | sed 's/^/           /'
  fi
  if [[ "$state" == "Voter" ]] && ready m3; then break; fi
  sleep 0.1
done
[[ "$state" == "Voter" ]] && ready m3 || { say "m3 was not promoted in time"; exit 1; }

status=$(tcurl "https://127.0.0.1:${http[m3]}/status")
attempt=$(grep -o '"history":\[[^]]*\]' <<<"$status" | grep -o '{[^}]*}' | tail -n1)
say "m3 was promoted by its own agent: $attempt"
say "m3 is a voter and ready:"
acurl -w '           HTTP %{http_code}\n' "https://127.0.0.1:${http[m3]}/readyz?verbose" | sed 's/^/           /'
say "metrics of m3's agent:"
say "without a client certificate, /metrics answers HTTP $(acurl -o /dev/null -w '%{http_code}' "https://127.0.0.1:${http[m3]}/metrics")"
tcurl "https://127.0.0.1:${http[m3]}/metrics" \
  | grep -E '^etcd_member_agent_(is_learner|is_voter|ready|lag_entries|join_to_voter_seconds|promotions_total|peer_tls)' \
  | sed 's/^/           /'
say "demo finished"
