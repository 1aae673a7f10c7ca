#!/usr/bin/env bash
# Provides a real HAProxy for the kubeadm load-balancer test and prints the path of an executable
# that runs it (a wrapper setting LD_LIBRARY_PATH for the libraries that came with it).
#
#   test-e2e/haproxy-bin.sh
#
# Order: $HAPROXY_BIN if set; else `haproxy` on PATH; else a cached copy; else Debian bookworm's
# haproxy package (2.6) and the shared libraries it needs that this machine may lack (liblua5.3-0,
# libopentracing-c-wrapper0, libopentracing1), downloaded without touching the system's apt
# configuration (test-e2e/debian-fetch.sh) into $ETCD_CACHE_DIR (default
# ~/.cache/etcd-member-agent). Exit status 2, with one line, when it cannot be provided.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
suite=bookworm
packages=(haproxy liblua5.3-0 libopentracing-c-wrapper0 libopentracing1)

die() { echo "haproxy-bin.sh: $*" >&2; exit 2; }

works() { "$1" -v 2>/dev/null | grep -q '^HAProxy version'; }

if [[ -n "${HAPROXY_BIN:-}" ]]; then
  works "$HAPROXY_BIN" || die "HAPROXY_BIN='$HAPROXY_BIN' does not run as HAProxy ('$HAPROXY_BIN -v')"
  echo "$HAPROXY_BIN"; exit 0
fi
if on_path=$(command -v haproxy 2>/dev/null) && works "$on_path"; then
  echo "$on_path"; exit 0
fi

target="$cache/haproxy-$suite/haproxy"
if [[ -x "$target" ]] && works "$target"; then
  echo "$target"; exit 0
fi

# shellcheck source=debian-fetch.sh
source "$here/debian-fetch.sh"
mkdir -p "$cache"
exec 9>"$cache/.lock-haproxy"
flock 9
if [[ -x "$target" ]] && works "$target"; then
  echo "$target"; exit 0
fi
work=$(mktemp -d "$cache/apt-haproxy.XXXXXX")
trap 'rm -rf "${work:-}"' EXIT
debian_download "$work" "$suite" "${packages[@]}" || die "could not download ${packages[*]} from Debian $suite; install haproxy or set HAPROXY_BIN"
libs=$(find "$work/x" -name '*.so*' -printf '%h\n' | sort -u | sed "s#^$work/x#$cache/haproxy-$suite/root#" | paste -sd:)
rm -rf "$cache/haproxy-$suite" && mkdir -p "$cache/haproxy-$suite" && mv "$work/x" "$cache/haproxy-$suite/root"
cat > "$target" <<WRAPPER
#!/bin/sh
LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$cache/haproxy-$suite/root/usr/sbin/haproxy" "\$@"
WRAPPER
chmod +x "$target"
ls "$work"/haproxy_*.deb | xargs -n1 basename > "$cache/haproxy-$suite/SOURCE"
rm -rf "$work"
works "$target" || die "the downloaded HAProxy does not run: $("$target" -v 2>&1 | head -n1)"
echo "haproxy-bin.sh: installed $("$target" -v | head -n1) from Debian $suite into $cache/haproxy-$suite" >&2
echo "$target"
