#!/usr/bin/env bash
# Provides a real Prometheus (and its promtool) for the alert tests and prints the directory
# holding `prometheus` and `promtool`.
#
#   test-e2e/prometheus-bin.sh
#
# Order: $PROMETHEUS_BIN (that directory) if set; else a cached copy; else Debian bookworm's
# prometheus package (2.42), downloaded without touching the system's apt configuration
# (test-e2e/debian-fetch.sh) into $ETCD_CACHE_DIR (default ~/.cache/etcd-member-agent).
# Exit status 2, with one line, when it cannot be provided.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
suite=bookworm

die() { echo "prometheus-bin.sh: $*" >&2; exit 2; }

works() { [[ -x "$1/prometheus" && -x "$1/promtool" ]] && "$1/promtool" --version >/dev/null 2>&1; }

if [[ -n "${PROMETHEUS_BIN:-}" ]]; then
  works "$PROMETHEUS_BIN" || die "PROMETHEUS_BIN='$PROMETHEUS_BIN' is not a directory with a working prometheus and promtool"
  echo "$PROMETHEUS_BIN"; exit 0
fi

target="$cache/prometheus-$suite/usr/bin"
if works "$target"; then echo "$target"; exit 0; fi

# shellcheck source=debian-fetch.sh
source "$here/debian-fetch.sh"
mkdir -p "$cache"
exec 9>"$cache/.lock-prometheus"
flock 9
if works "$target"; then echo "$target"; exit 0; fi
work=$(mktemp -d "$cache/apt-prometheus.XXXXXX")
trap 'rm -rf "${work:-}"' EXIT
debian_download "$work" "$suite" prometheus || die "could not download prometheus from Debian $suite; set PROMETHEUS_BIN"
rm -rf "$cache/prometheus-$suite" && mv "$work/x" "$cache/prometheus-$suite"
ls "$work"/prometheus_*.deb | xargs -n1 basename > "$cache/prometheus-$suite/SOURCE"
rm -rf "$work"
works "$target" || die "the downloaded Prometheus does not run: $("$target/promtool" --version 2>&1 | head -n1)"
echo "prometheus-bin.sh: installed $("$target/promtool" --version | head -n1) from Debian $suite into $cache/prometheus-$suite" >&2
echo "$target"
