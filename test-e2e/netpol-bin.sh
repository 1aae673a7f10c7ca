#!/usr/bin/env bash
# Provides the node's NetworkPolicy enforcer for test-e2e/kube-node.sh and prints the directory
# that holds it: kube-router (only its network-policy controller runs: --run-firewall, no router,
# no service proxy) and the ipset command it drives, behind a wrapper.
#
#   test-e2e/netpol-bin.sh
#
# kube-router is built with the go command from its official module
# github.com/cloudnativelabs/kube-router/v2, pinned by our module test-e2e/netpol-go/ (go.mod +
# go.sum), CGO_ENABLED=0 as upstream's release build, version ldflags so that --version tells the
# truth. v2.1.0 is the only version the Go module proxy serves here; what is reported against it and
# why it does not reach this use: docs/compatibility.md. ipset (and libipset13) come from Debian
# bookworm, downloaded without touching the system's apt configuration (debian-fetch.sh).
# Cached in $ETCD_CACHE_DIR (default ~/.cache/etcd-member-agent)/netpol-<versions>, apart from the
# other node parts (node-bin.sh), so that neither rebuilds the other; a lock keeps parallel runs
# from building it twice. Exit status 2, with one line saying what is missing, when it cannot be
# provided.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
mod="$here/netpol-go"

die() { echo "netpol-bin.sh: $*" >&2; exit 2; }

version=$(sed -n 's#^[[:space:]]*github.com/cloudnativelabs/kube-router/v2 \(v[^ ]*\).*#\1#p' "$mod/go.mod" | head -n1)
[[ -n "$version" ]] || die "$mod/go.mod does not pin github.com/cloudnativelabs/kube-router/v2"
key=$(cat "$mod/go.mod" "$here/netpol-bin.sh" | sha256sum | cut -c1-12)
target="$cache/netpol-$key"
if [[ -f "$target/COMPLETE" ]]; then echo "$target"; exit 0; fi

command -v go >/dev/null || die "kube-router is built with the go command, and there is none on PATH; install Go (1.26+)"
mkdir -p "$cache"
exec 9>"$cache/.lock-netpol-$key"
flock 9
if [[ -f "$target/COMPLETE" ]]; then echo "$target"; exit 0; fi

work=$(mktemp -d "$cache/build-netpol-$key.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
echo "netpol-bin.sh: building kube-router $version (first run only, minutes)" >&2
pkg=github.com/cloudnativelabs/kube-router/v2
if ! (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
        -ldflags "-s -w -X $pkg/pkg/version.Version=$version -X $pkg/pkg/version.BuildDate=1970-01-01T00:00:00Z" \
        -o "$work/kube-router" "$pkg/cmd/kube-router") >"$work/build.log" 2>&1; then
  tail -n 15 "$work/build.log" >&2
  die "go build of $pkg/cmd/kube-router@$version failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
fi

# --- Debian's ipset behind a wrapper --------------------------------------------------------------
# shellcheck source=debian-fetch.sh
source "$here/debian-fetch.sh"
debian_download "$work/debian" bookworm ipset libipset13 \
  || die "could not download ipset and libipset13 from Debian bookworm"
mv "$work/debian/x" "$work/debian-x" && rm -rf "$work/debian"
arch_lib=$(ls -d "$work"/debian-x/usr/lib/*-linux-gnu | head -n1)
arch_lib="$target/debian-x/${arch_lib#"$work/debian-x/"}"
cat >"$work/ipset" <<WRAPPER
#!/bin/bash
# Debian's ipset, extracted under $target/debian-x, not installed.
LD_LIBRARY_PATH="$arch_lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec -a ipset "$target/debian-x/usr/sbin/ipset" "\$@"
WRAPPER
chmod +x "$work/ipset"

rm -rf "$target" && mv "$work" "$target"
trap - EXIT
"$target/ipset" version >/dev/null 2>&1 || die "Debian's ipset does not run here: $("$target/ipset" version 2>&1 | head -n1)"
{
  echo "kube-router $version (github.com/cloudnativelabs/kube-router/v2 module, $(go version | cut -d' ' -f3));"
  echo "Debian bookworm: $("$target/ipset" version | head -n1)"
} >"$target/SOURCE"
touch "$target/COMPLETE"
echo "netpol-bin.sh: built kube-router $version and fetched ipset in $((SECONDS - started)) s into $target" >&2
echo "$target"
