#!/usr/bin/env bash
# Provides a real etcd binary (etcdctl beside it) for tests and the demo and prints its path.
#
#   test-e2e/etcd-bin.sh [3.7|3.6|3.5|3.4]      (default 3.6)
#
# Order: the override variable if set ($ETCD37_BIN, $ETCD36_BIN, $ETCD_BIN for 3.5, $ETCD34_BIN);
# else a cached binary; else
#   3.6, 3.7  built with the go command from etcd's published modules, pinned by our own module
#             test-e2e/etcd-go/<minor>/ (go.mod + go.sum): etcd's `package main` is the root of
#             go.etcd.io/etcd/server/v3, etcdctl's the root of go.etcd.io/etcd/etcdctl/v3 (their
#             go.mod files carry replace lines, so `go install pkg@version` cannot build them);
#   3.5, 3.4  Debian's etcd-server package, downloaded without touching the system's apt
#             configuration (private source list and state dir) from the mirror that the system's
#             own apt configuration names: 3.4 from bookworm, 3.5 from sid (trixie when sid has
#             moved on to another minor version).
# Binaries are cached in $ETCD_CACHE_DIR (default ~/.cache/etcd-member-agent), so a second run
# fetches and builds nothing; a lock keeps parallel runs from building the same thing twice.
# Exit status 2, with one line saying what is missing, when the binary cannot be provided.
set -euo pipefail

want="${1:-3.6}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"

die() { echo "etcd-bin.sh: $*" >&2; exit 2; }

minor_of() { "$1" --version 2>/dev/null | sed -n 's/^etcd Version: \([0-9]*\.[0-9]*\)\..*/\1/p'; }

case "$want" in
  3.7) override="${ETCD37_BIN:-}"; var=ETCD37_BIN ;;
  3.6) override="${ETCD36_BIN:-}"; var=ETCD36_BIN ;;
  3.5) override="${ETCD_BIN:-}"; var=ETCD_BIN; suites="sid trixie" ;;
  3.4) override="${ETCD34_BIN:-}"; var=ETCD34_BIN; suites="bookworm" ;;
  *) die "unsupported etcd version '$want' (expected 3.7, 3.6, 3.5 or 3.4)" ;;
esac

if [[ -n "$override" ]]; then
  [[ -x "$override" ]] || die "$var='$override' is not an executable file"
  [[ "$(minor_of "$override")" == "$want" ]] || die "$var='$override' is not etcd $want ($("$override" --version 2>&1 | head -n1))"
  echo "$override"; exit 0
fi

# --- 3.6 and 3.7: built from etcd's Go modules ------------------------------------------------
build_from_modules() {
  local module="$here/etcd-go/$want"
  [[ -f "$module/go.mod" ]] || die "missing $module/go.mod"
  local version
  version=$(sed -n 's#^[[:space:]]*go.etcd.io/etcd/server/v3 \(v[0-9.]*\).*#\1#p' "$module/go.mod")
  [[ -n "$version" ]] || die "$module/go.mod does not pin go.etcd.io/etcd/server/v3"
  local target="$cache/etcd-${version#v}/etcd"
  if [[ -x "$target" && -x "${target}ctl" ]]; then echo "$target"; return; fi

  command -v go >/dev/null || die "etcd $want must be built with the go command, and there is none on PATH; install Go (1.26+) or set $var"
  mkdir -p "$cache"
  exec 9>"$cache/.lock-etcd-${version#v}"
  flock 9
  if [[ -x "$target" && -x "${target}ctl" ]]; then echo "$target"; return; fi

  # global: the EXIT trap removes it whatever happens; a failed build's log is kept beside the cache
  work=$(mktemp -d "$cache/build-etcd-${version#v}.XXXXXX")
  trap 'rm -rf "${work:-}"' EXIT
  local log="$cache/build-etcd-${version#v}.failed.log"
  local started=$SECONDS
  echo "etcd-bin.sh: building etcd $version and etcdctl from go.etcd.io modules (first run only)" >&2
  local ldflags="-X go.etcd.io/etcd/api/v3/version.GitSHA=module-${version}"
  for pair in "etcd:go.etcd.io/etcd/server/v3" "etcdctl:go.etcd.io/etcd/etcdctl/v3"; do
    if ! (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" \
            -o "$work/${pair%%:*}" "${pair#*:}") >"$work/build.log" 2>&1; then
      tail -n 5 "$work/build.log" >&2
      cp "$work/build.log" "$log"
      die "go build of ${pair#*:}@$version failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY)); see $log, or set $var"
    fi
  done
  rm -rf "$cache/etcd-${version#v}" "$log" && mv "$work" "$cache/etcd-${version#v}"
  echo "$version (go.etcd.io modules, $(go version | cut -d' ' -f3))" > "$cache/etcd-${version#v}/SOURCE"
  echo "etcd-bin.sh: built $("$target" --version | head -n1) in $((SECONDS - started)) s into $cache/etcd-${version#v}" >&2
  echo "$target"
}

if [[ "$want" == 3.6 || "$want" == 3.7 ]]; then
  build_from_modules
  exit 0
fi

# --- 3.5 and 3.4: Debian's etcd-server package ----------------------------------------------
if on_path=$(command -v etcd 2>/dev/null) && [[ "$(minor_of "$on_path")" == "$want" ]]; then
  echo "$on_path"; exit 0
fi

target="$cache/etcd-$want/usr/bin/etcd"
if [[ -x "$target" && "$(minor_of "$target")" == "$want" ]]; then
  echo "$target"; exit 0
fi

# shellcheck source=debian-fetch.sh
source "$here/debian-fetch.sh"

mkdir -p "$cache"
exec 9>"$cache/.lock-$want"
flock 9
# Another process may have finished the download while we waited for the lock.
if [[ -x "$target" && "$(minor_of "$target")" == "$want" ]]; then
  echo "$target"; exit 0
fi

trap 'rm -rf "${work:-}"' EXIT
for suite in $suites; do
  work=$(mktemp -d "$cache/apt-$suite.XXXXXX")
  if ! debian_download "$work" "$suite" etcd-server; then
    echo "etcd-bin.sh: no etcd-server from Debian $suite" >&2
    rm -rf "$work"
    continue
  fi
  deb=$(ls "$work"/etcd-server_*.deb | head -n1)
  if [[ "$(minor_of "$work/x/usr/bin/etcd")" == "$want" ]]; then
    rm -rf "$cache/etcd-$want" && mv "$work/x" "$cache/etcd-$want"
    basename "$deb" > "$cache/etcd-$want/SOURCE"
    rm -rf "$work"
    echo "etcd-bin.sh: installed $(minor_of "$target") from Debian $suite ($(debian_mirror)) into $cache/etcd-$want" >&2
    echo "$target"; exit 0
  fi
  echo "etcd-bin.sh: Debian $suite carries $(basename "$deb"), not $want; trying the next suite" >&2
  rm -rf "$work"
done
die "could not obtain etcd $want from Debian ($suites); set $var"
