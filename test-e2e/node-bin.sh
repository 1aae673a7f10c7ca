#!/usr/bin/env bash
# Provides the node's own parts for test-e2e/kube-node.sh and prints the directory that holds them
# all (a bin dir: containerd, ctr, containerd-shim-runc-v2, runc, coredns, local-path-provisioner,
# helm, crictl, cni/{bridge,host-local,loopback,portmap}, iptables wrappers, busybox).
#
#   test-e2e/node-bin.sh
#
# Each part is built with the go command from its official module, pinned by a module of ours under
# test-e2e/node-go/<part>/ (go.mod + go.sum, `tool` lines name the packages), like upstream's
# release builds: CGO_ENABLED=0 except runc, which needs cgo and libseccomp (its seccomp support;
# the headers come from Debian's libseccomp-dev, downloaded, never installed); version ldflags so
# that --version tells the truth. From Debian (downloaded without touching the system's apt
# configuration, as etcd-bin.sh does): iptables for kube-proxy and the CNI portmap plugin (run
# through wrappers that point at the extracted libraries), busybox-static for the provisioner's
# helper Pods.
# Everything is cached in $ETCD_CACHE_DIR (default ~/.cache/etcd-member-agent)/node-<versions>, so
# a second run builds nothing; a lock keeps parallel runs from building the same thing twice.
# Exit status 2, with one line saying what is missing, when a part cannot be provided.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
mods="$here/node-go"

die() { echo "node-bin.sh: $*" >&2; exit 2; }

# pinned MODULE-DIR MODULE-PATH: the version our go.mod pins.
pinned() {
  local v
  v=$(sed -n "s#^[[:space:]]*$2 \(v[^ ]*\).*#\1#p" "$mods/$1/go.mod" | head -n1)
  [[ -n "$v" ]] || die "$mods/$1/go.mod does not pin $2"
  echo "$v"
}

containerd_v=$(pinned containerd github.com/containerd/containerd/v2)
runc_v=$(pinned runc github.com/opencontainers/runc)
cni_v=$(pinned cni github.com/containernetworking/plugins)
coredns_v=$(pinned coredns github.com/coredns/coredns)
helm_v=$(pinned helm helm.sh/helm/v4)
crictl_v=$(pinned crictl sigs.k8s.io/cri-tools)
lpp_v=$(pinned local-path github.com/rancher/local-path-provisioner)
key=$(cat "$mods"/*/go.mod "$here/node-bin.sh" | sha256sum | cut -c1-12)
target="$cache/node-$key"
if [[ -f "$target/COMPLETE" ]]; then echo "$target"; exit 0; fi

command -v go >/dev/null || die "the node's parts are built with the go command, and there is none on PATH; install Go (1.26+)"
command -v gcc >/dev/null || die "runc is built with cgo and there is no gcc on PATH; install gcc"
mkdir -p "$cache"
exec 9>"$cache/.lock-node-$key"
flock 9
if [[ -f "$target/COMPLETE" ]]; then echo "$target"; exit 0; fi

work=$(mktemp -d "$cache/build-node-$key.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cni"
started=$SECONDS
echo "node-bin.sh: building the node's parts (containerd $containerd_v, runc $runc_v, CNI plugins $cni_v, CoreDNS $coredns_v, local-path-provisioner $lpp_v, helm $helm_v, crictl $crictl_v; first run only, minutes)" >&2

# build PART OUT PACKAGE [go build args...]
build() {
  local part=$1 out=$2 pkg=$3; shift 3
  local t=$SECONDS
  if ! (cd "$mods/$part" && GOFLAGS=-mod=readonly go build -trimpath "$@" -o "$out" "$pkg") \
        >"$work/build-$part.log" 2>&1; then
    tail -n 15 "$work/build-$part.log" >&2
    die "go build of $pkg failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY)); see $work/build-$part.log"
  fi
  echo "node-bin.sh: $(basename "$out") in $((SECONDS - t)) s" >&2
}

# --- Debian parts: libseccomp-dev (runc's headers), iptables, busybox-static ------------------
# Extracted once into a directory of their own (its path ends up in runc's link line and in the
# iptables wrappers, so it must not move).
debian_pkgs="libseccomp-dev libseccomp2 iptables libip4tc2 libip6tc2 libxtables12 libnftnl11 libmnl0 libnetfilter-conntrack3 libnfnetlink0 busybox-static"
x="$cache/node-debian-$(echo "$debian_pkgs" | sha256sum | cut -c1-12)"
if [[ ! -f "$x/COMPLETE" ]]; then
  # shellcheck source=debian-fetch.sh
  source "$here/debian-fetch.sh"
  deb="$work/debian"
  # shellcheck disable=SC2086
  debian_download "$deb" bookworm $debian_pkgs \
    || die "could not download libseccomp-dev, iptables and busybox-static from Debian bookworm"
  rm -rf "$x" && mv "$deb/x" "$x" && rm -rf "$deb"
  touch "$x/COMPLETE"
fi
arch_lib=$(ls -d "$x"/usr/lib/*-linux-gnu | head -n1)
[[ -f "$x/usr/include/seccomp.h" && -f "$arch_lib/libseccomp.a" ]] || die "libseccomp-dev from Debian has no seccomp.h or libseccomp.a"

# --- runc: cgo, seccomp, static libseccomp as upstream's release build -------------------------
runc_ldflags="-s -w -X main.version=${runc_v#v} -X main.gitCommit=module-$runc_v"
# pkg-config's answer is not part of the go command's cache key, but CGO_CFLAGS/CGO_LDFLAGS are:
# they name the extracted directory, so a cached build never links against a path that is gone
mkdir -p "$x/pkgconfig-node"
printf 'Name: libseccomp\nDescription: Debian libseccomp-dev, extracted\nVersion: %s\nCflags: -I%s\nLibs: -L%s -lseccomp\n' \
  "$(sed -n 's/^Version: //p' "$arch_lib/pkgconfig/libseccomp.pc")" "$x/usr/include" "$arch_lib" \
  >"$x/pkgconfig-node/libseccomp.pc"
CGO_ENABLED=1 PKG_CONFIG_PATH="$x/pkgconfig-node" CGO_CFLAGS="-I$x/usr/include" CGO_LDFLAGS="-L$arch_lib" \
  build runc "$work/runc" github.com/opencontainers/runc -tags "seccomp urfave_cli_no_docs" \
    -ldflags "$runc_ldflags -extldflags -static"
"$work/runc" --version | grep -q seccomp || die "runc was built without seccomp"

export CGO_ENABLED=0
# --- containerd, ctr, the runc shim -----------------------------------------------------------
cld="-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_v -X github.com/containerd/containerd/v2/version.Revision=module-$containerd_v -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"
for p in containerd ctr containerd-shim-runc-v2; do
  build containerd "$work/$p" "github.com/containerd/containerd/v2/cmd/$p" \
    -tags "no_btrfs no_devmapper no_zfs urfave_cli_no_docs" -ldflags "$cld"
done

# --- CNI plugins -------------------------------------------------------------------------------
for p in main/bridge ipam/host-local main/loopback meta/portmap; do
  build cni "$work/cni/${p#*/}" "github.com/containernetworking/plugins/plugins/$p" \
    -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$cni_v"
done

# --- CoreDNS, local-path-provisioner, helm, crictl ---------------------------------------------
build coredns "$work/coredns" github.com/coredns/coredns \
  -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=module-$coredns_v"
build local-path "$work/local-path-provisioner" github.com/rancher/local-path-provisioner \
  -ldflags "-s -w -X main.VERSION=$lpp_v"
build helm "$work/helm" helm.sh/helm/v4/cmd/helm \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_v -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
build crictl "$work/crictl" sigs.k8s.io/cri-tools/cmd/crictl \
  -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$crictl_v"

# --- Debian's iptables behind wrappers; busybox -------------------------------------------------
multi="$x/usr/sbin/xtables-nft-multi"
[[ -x "$multi" ]] || die "Debian's iptables has no xtables-nft-multi"
for name in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  cat >"$work/$name" <<WRAPPER
#!/bin/bash
# Debian's iptables (nf_tables backend), extracted under $x, not installed.
LD_LIBRARY_PATH="$arch_lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" XTABLES_LIBDIR="$arch_lib/xtables" exec -a $name "$multi" "\$@"
WRAPPER
  chmod +x "$work/$name"
done
"$work/iptables" --version >/dev/null 2>&1 || die "Debian's iptables does not run here: $("$work/iptables" --version 2>&1 | head -n1)"
cp "$x/bin/busybox" "$work/busybox"

{
  echo "containerd $containerd_v, runc $runc_v, CNI plugins $cni_v, CoreDNS $coredns_v,"
  echo "local-path-provisioner $lpp_v, helm $helm_v, crictl $crictl_v ($(go version | cut -d' ' -f3));"
  echo "Debian bookworm: $("$work/iptables" --version), busybox $("$work/busybox" | head -n1 | cut -d' ' -f2)"
} > "$work/SOURCE"
rm -rf "$target" && mv "$work" "$target"
touch "$target/COMPLETE"
echo "node-bin.sh: built the node's parts in $((SECONDS - started)) s into $target" >&2
echo "$target"
