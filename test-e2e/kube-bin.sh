#!/usr/bin/env bash
# Provides a real kube-apiserver and kube-controller-manager for tests and prints the directory
# that holds both; with `node`, also kube-scheduler, kubelet, kube-proxy and kubectl (what
# test-e2e/kube-node.sh runs).
#
#   test-e2e/kube-bin.sh [1.36] [node]      (default 1.36; one pinned patch per minor line)
#
# Order: $KUBE_BIN_DIR if set (a directory with your own kube-apiserver and
# kube-controller-manager); else a cached build; else built with the go command from Kubernetes'
# published module k8s.io/kubernetes, pinned by our own module test-e2e/kube-go/<minor>/ (go.mod +
# go.sum). k8s.io/kubernetes replaces its ~33 staging modules (k8s.io/api, client-go, ...) with
# ./staging paths, which a dependent module cannot use, so our go.mod replaces each with its
# published twin k8s.io/<name> v0.<minor>.<patch>; the list is the replace block of the .mod file
# that `go mod download -json k8s.io/kubernetes@v1.<minor>.<patch>` returns. The binaries are
# built like upstream's: CGO_ENABLED=0, godebug default from upstream's go.mod, version ldflags so
# that /version and --version tell the truth.
# Binaries are cached in $ETCD_CACHE_DIR (default ~/.cache/etcd-member-agent), so a second run
# builds nothing; a lock keeps parallel runs from building the same thing twice.
# Exit status 2, with one line saying what is missing, when the binaries cannot be provided.
set -euo pipefail

want="${1:-1.36}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${ETCD_CACHE_DIR:-${HOME:-/tmp}/.cache/etcd-member-agent}"
programs=(kube-apiserver kube-controller-manager)
[[ "${2:-}" != node ]] || programs+=(kube-scheduler kubelet kube-proxy kubectl)

die() { echo "kube-bin.sh: $*" >&2; exit 2; }

if [[ -n "${KUBE_BIN_DIR:-}" ]]; then
  for p in "${programs[@]}"; do
    [[ -x "$KUBE_BIN_DIR/$p" ]] || die "KUBE_BIN_DIR='$KUBE_BIN_DIR' has no executable $p"
  done
  echo "$KUBE_BIN_DIR"; exit 0
fi

module="$here/kube-go/$want"
[[ -f "$module/go.mod" ]] || die "unsupported Kubernetes version '$want' (no $module/go.mod; have: $(ls "$here/kube-go" | tr '\n' ' '))"
version=$(sed -n 's#^[[:space:]]*k8s.io/kubernetes \(v[0-9.]*\).*#\1#p' "$module/go.mod")
[[ -n "$version" ]] || die "$module/go.mod does not pin k8s.io/kubernetes"
target="$cache/kubernetes-${version#v}"
built() { for p in "${programs[@]}"; do [[ -x "$target/$p" ]] || return 1; done; }
if built; then echo "$target"; exit 0; fi

command -v go >/dev/null || die "Kubernetes $want must be built with the go command, and there is none on PATH; install Go (1.26+) or set KUBE_BIN_DIR"
mkdir -p "$cache"
exec 9>"$cache/.lock-kubernetes-${version#v}"
flock 9
if built; then echo "$target"; exit 0; fi

work=$(mktemp -d "$cache/build-kubernetes-${version#v}.XXXXXX")
# the temporary directory goes whatever happens; a failed build's log is kept beside the cache
trap 'rm -rf "${work:-}"' EXIT
log="$cache/build-kubernetes-${version#v}.failed.log"
started=$SECONDS
missing=()
for p in "${programs[@]}"; do [[ -x "$target/$p" ]] || missing+=("$p"); done
echo "kube-bin.sh: building ${missing[*]} $version from k8s.io/kubernetes (first run only, minutes)" >&2
IFS=. read -r major minor _ <<<"${version#v}"
pkg=k8s.io/component-base/version
ldflags="-s -w"
for v in "$pkg" k8s.io/client-go/pkg/version; do
  ldflags+=" -X $v.gitVersion=$version -X $v.gitMajor=$major -X $v.gitMinor=$minor"
  ldflags+=" -X $v.gitCommit=module-$version -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
done
# one go command for all of them: one program's link overlaps another's compile (about 4% less
# time than one command each, measured for the six of 1.36)
pkgs=()
for p in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done
if ! (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" \
        -o "$work/" "${pkgs[@]}") >"$work/build.log" 2>&1; then
  tail -n 5 "$work/build.log" >&2
  cp "$work/build.log" "$log"
  die "go build of ${pkgs[*]}@$version failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY)); see $log, or set KUBE_BIN_DIR"
fi
# a directory with some programs already keeps them: only the missing ones are added
mkdir -p "$target"
for p in "${missing[@]}"; do mv "$work/$p" "$target/$p"; done
rm -rf "$work" "$log"
echo "$version (k8s.io/kubernetes module, $(go version | cut -d' ' -f3))" > "$target/SOURCE"
echo "kube-bin.sh: built ${missing[*]} $version in $((SECONDS - started)) s into $target" >&2
echo "$target"
