#!/usr/bin/env bash
# Provides a real etcd binary for tests and the demo and prints its path.
#
#   test-e2e/etcd-bin.sh [3.5|3.4]      (default 3.5)
#
# Order: $ETCD_BIN (3.5) / $ETCD34_BIN (3.4) if set; else an `etcd` on PATH of the wanted
# minor version; else Debian's etcd-server package, downloaded without touching the
# system's apt configuration (private source list and state dir) and unpacked into a cache
# ($ETCD_CACHE_DIR, default ~/.cache/etcd-member-agent), so a second run downloads nothing.
# 3.4 comes from bookworm; 3.5 from sid, falling back to trixie when sid carries another
# minor version.
set -euo pipefail

want="${1:-3.5}"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"

die() { echo "etcd-bin.sh: $*" >&2; exit 2; }

minor_of() { "$1" --version 2>/dev/null | sed -n 's/^etcd Version: \([0-9]*\.[0-9]*\)\..*/\1/p'; }

case "$want" in
  3.5) override="${ETCD_BIN:-}"; suites="sid trixie" ;;
  3.4) override="${ETCD34_BIN:-}"; suites="bookworm" ;;
  *) die "unsupported etcd version '$want' (expected 3.5 or 3.4)" ;;
esac

if [[ -n "$override" ]]; then
  [[ -x "$override" ]] || die "ETCD binary '$override' is not an executable file"
  echo "$override"; exit 0
fi

if on_path=$(command -v etcd 2>/dev/null) && [[ "$(minor_of "$on_path")" == "$want" ]]; then
  echo "$on_path"; exit 0
fi

target="$cache/etcd-$want/usr/bin/etcd"
if [[ -x "$target" && "$(minor_of "$target")" == "$want" ]]; then
  echo "$target"; exit 0
fi

command -v apt-get >/dev/null || die "no etcd $want found and apt-get is not available; set ETCD_BIN (3.5) or ETCD34_BIN (3.4)"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r "$keyring" ]] || die "no etcd $want found and $keyring is missing; set ETCD_BIN / ETCD34_BIN"

mkdir -p "$cache"
lock="$cache/.lock-$want"
exec 9>"$lock"
flock 9
# Another process may have finished the download while we waited for the lock.
if [[ -x "$target" && "$(minor_of "$target")" == "$want" ]]; then
  echo "$target"; exit 0
fi

for suite in $suites; do
  work=$(mktemp -d "$cache/apt-$suite.XXXXXX")
  mkdir -p "$work/lists/partial" "$work/archives/partial"
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" > "$work/sources.list"
  opts=(-q -oDir::Etc::SourceList="$work/sources.list" -oDir::Etc::SourceParts=/dev/null
        -oDir::State::Lists="$work/lists" -oDir::Cache="$work" -oDebug::NoLocking=1
        -oAPT::Sandbox::User=root)
  if ! apt-get "${opts[@]}" update >"$work/update.log" 2>&1; then
    echo "etcd-bin.sh: apt-get update for $suite failed (see $work/update.log)" >&2
    continue
  fi
  (cd "$work" && apt-get "${opts[@]}" download etcd-server >"$work/download.log" 2>&1) || {
    echo "etcd-bin.sh: apt-get download etcd-server from $suite failed (see $work/download.log)" >&2
    continue
  }
  deb=$(ls "$work"/etcd-server_*.deb | head -n1)
  rm -rf "$work/x" && dpkg -x "$deb" "$work/x"
  if [[ "$(minor_of "$work/x/usr/bin/etcd")" == "$want" ]]; then
    rm -rf "$cache/etcd-$want" && mv "$work/x" "$cache/etcd-$want"
    basename "$deb" > "$cache/etcd-$want/SOURCE"
    rm -rf "$work"
    echo "etcd-bin.sh: installed $(minor_of "$target") from Debian $suite into $cache/etcd-$want" >&2
    echo "$target"; exit 0
  fi
  echo "etcd-bin.sh: Debian $suite carries $(basename "$deb"), not $want; trying the next suite" >&2
  rm -rf "$work"
done
die "could not obtain etcd $want from Debian ($suites); set ETCD_BIN (3.5) or ETCD34_BIN (3.4)"
