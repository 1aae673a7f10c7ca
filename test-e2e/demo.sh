#!/usr/bin/env bash
# The agent's story on one machine, narrated as it happens:
# a 3-member etcd cluster with an agent next to each member, some data, then a new member:
# `join` adds it as a learner and writes its env file, its etcd starts from that file, and its
# own agent watches it: not started -> learner catching up -> caught up -> promoted -> ready,
# kept out of traffic by /readyz until it is a voter.
#
#   test-e2e/demo.sh            (etcd 3.6; ETCD_VERSION=3.7|3.5|3.4 chooses another; DEMO_KEYS=n for more data)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version="${ETCD_VERSION:-3.6}"
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

declare -A client peer http
for m in m0 m1 m2 m3; do
  free_port; client[$m]=$port; free_port; peer[$m]=$port; free_port; http[$m]=$port
done
initial="m0=http://127.0.0.1:${peer[m0]},m1=http://127.0.0.1:${peer[m1]},m2=http://127.0.0.1:${peer[m2]}"

start_etcd() { # start_etcd NAME INITIAL_CLUSTER STATE
  "$etcd" --name "$1" --data-dir "$work/$1.etcd" --logger zap \
    --listen-client-urls "http://127.0.0.1:${client[$1]}" --advertise-client-urls "http://127.0.0.1:${client[$1]}" \
    --listen-peer-urls "http://127.0.0.1:${peer[$1]}" --initial-advertise-peer-urls "http://127.0.0.1:${peer[$1]}" \
    --initial-cluster "$2" --initial-cluster-state "$3" --initial-cluster-token demo \
    >"$work/$1.etcd.log" 2>&1 &
  pids+=($!)
}

start_agent() { # start_agent NAME [FLAGS...]
  local name=$1; shift
  java -jar "$jar" run --etcd-endpoint "http://127.0.0.1:${client[$name]}" \
    --http-host 127.0.0.1 --http-port "${http[$name]}" --poll-interval 200ms "$@" \
    >"$work/$name.agent.log" 2>&1 &
  pids+=($!)
}

checks_of() { # the checks of a /status document, in /readyz style
  grep -o '{"name":"[^"]*","passed":[a-z]*,"reason":"[^"]*","message":"[^"]*"}' <<<"$1" \
    | sed -E 's/^\{"name":"([^"]*)","passed":true.*/[+]\1 ok/; s/^\{"name":"([^"]*)","passed":false,"reason":"[^"]*","message":"([^"]*)"\}/[-]\1 failed: \2/'
}

ready() { [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${http[$1]}/readyz") == 200 ]]; }

say "starting a 3-member etcd $version cluster, an agent next to each member"
for m in m0 m1 m2; do start_etcd "$m" "$initial" new; done
for m in m0 m1 m2; do start_agent "$m"; done
for m in m0 m1 m2; do wait_for 60 "agent $m ready" ready "$m"; done
say "all three voters ready; m1 says:"
curl -s "http://127.0.0.1:${http[m1]}/readyz?verbose" | sed 's/^/           /'

say "writing $keys keys of 768 KiB, so that a new member has something to catch up on"
value=$(head -c 786432 /dev/urandom | base64 -w0)
for i in $(seq 1 "$keys"); do
  k=$(printf 'demo/%06d' "$i" | base64 -w0)
  printf '{"key":"%s","value":"%s"}' "$k" "$value" >"$work/put.json"
  curl -s -o /dev/null -X POST "http://127.0.0.1:${client[m0]}/v3/kv/put" --data-binary "@$work/put.json"
done
voters="http://127.0.0.1:${client[m0]},http://127.0.0.1:${client[m1]},http://127.0.0.1:${client[m2]}"
say "done; m3's init container: etcd-member-agent join (adds m3 as a learner, writes its env file)"
java -jar "$jar" join --name m3 --peer-urls "http://127.0.0.1:${peer[m3]}" \
  --client-urls "http://127.0.0.1:${client[m3]}" --cluster-endpoints "$voters" \
  --data-dir "$work/m3.etcd" --env-file "$work/m3.env" 2>&1 | sed 's/^/           /'
sed 's/^/           /' "$work/m3.env"

# Five stable polls (1 s at the learner's 200 ms) keep the learner phase long enough to show;
# the default (2) promotes within 400 ms of catching up.
start_agent m3 --cluster-endpoints "$voters" --peer-urls "http://127.0.0.1:${peer[m3]}" \
  --max-lag-entries 50 --promote-stable-polls 5
first_verdict() {
  local s
  s=$(curl -sf "http://127.0.0.1:${http[m3]}/status") && [[ "$s" != *'"state":"Starting"'* ]]
}
wait_for 30 "agent m3's first verdict" first_verdict
status=$(curl -s "http://127.0.0.1:${http[m3]}/status")
say "m3's agent, before its etcd runs: state $(field "$status" state)"
curl -s "http://127.0.0.1:${http[m3]}/readyz/voter" | sed 's/^/           /'

say "starting m3's etcd from the env file (as the etcd container does: set -a; . env; exec etcd)"
(
  set -a; . "$work/m3.env"; set +a
  exec "$etcd" --logger zap --listen-client-urls "http://127.0.0.1:${client[m3]}" \
    --listen-peer-urls "http://127.0.0.1:${peer[m3]}" >"$work/m3.etcd.log" 2>&1
) &
pids+=($!)

last=""
shown_learner=""
deadline=$(( $(date +%s) + 120 ))
while (( $(date +%s) < deadline )); do
  status=$(curl -s "http://127.0.0.1:${http[m3]}/status" || true)
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

status=$(curl -s "http://127.0.0.1:${http[m3]}/status")
attempt=$(grep -o '"history":\[[^]]*\]' <<<"$status" | grep -o '{[^}]*}' | tail -n1)
say "m3 was promoted by its own agent: $attempt"
say "m3 is a voter and ready:"
curl -s -w '           HTTP %{http_code}\n' "http://127.0.0.1:${http[m3]}/readyz?verbose" | sed 's/^/           /'
say "metrics of m3's agent:"
curl -s "http://127.0.0.1:${http[m3]}/metrics" \
  | grep -E '^etcd_member_agent_(is_learner|is_voter|ready|lag_entries|join_to_voter_seconds|promotions_total)' \
  | sed 's/^/           /'
say "demo finished"
