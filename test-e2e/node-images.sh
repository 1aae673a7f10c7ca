# Sourced by kube-node.sh: the node's images, made without a registry or a Docker engine as
# docker-archive tars that `ctr images import` takes. Each is cached under $cache/images by a key of
# everything it is made from, so a second `up` only imports.
#
#   etcd (3.5, 3.6, 3.7), pause, CoreDNS, local-path-provisioner and busybox: one layer holding the
#   binaries the project already builds or fetches (etcd-bin.sh, node-bin.sh, Kubernetes' pause.c).
#   The agent: the Dockerfile's run stage, read and carried out here (see agent_image).

# scratch: a temporary directory inside the node's DIR (what a failed build leaves stays there, and
# down unmounts whatever a failed image step left mounted under DIR)
scratch() {
  mkdir -p "$dir/tmp"
  mktemp -d "$dir/tmp/image.XXXXXX"
}

# docker_archive REF ROOTFS CONFIG OUT: one layer (ROOTFS as root-owned files), the image config
# CONFIG (the "config" object: Entrypoint, Cmd, Env, User, ...), tagged REF, written to OUT.
docker_archive() {
  local ref=$1 rootfs=$2 config=$3 out=$4
  local t
  t=$(scratch)
  # modification times kept: the JVM checks the jar's against the one the AOT cache was trained on
  # ("timestamp has changed": the cache is not used), as a layer a Docker build makes keeps them
  tar --numeric-owner --owner=0 --group=0 --sort=name -C "$rootfs" -cf "$t/layer.tar" .
  local diff
  diff=$(sha256sum "$t/layer.tar" | cut -d' ' -f1)
  mkdir "$t/$diff" && mv "$t/layer.tar" "$t/$diff/layer.tar"
  jq -n --argjson c "$config" --arg d "sha256:$diff" \
    '{architecture: "amd64", os: "linux", created: "1970-01-01T00:00:00Z", config: $c,
      rootfs: {type: "layers", diff_ids: [$d]}, history: [{created_by: "kube-node.sh"}]}' >"$t/config.json"
  local cid
  cid=$(sha256sum "$t/config.json" | cut -d' ' -f1)
  mv "$t/config.json" "$t/$cid.json"
  jq -n --arg c "$cid.json" --arg r "$ref" --arg l "$diff/layer.tar" \
    '[{Config: $c, RepoTags: [$r], Layers: [$l]}]' >"$t/manifest.json"
  tar -C "$t" -cf "$out.tmp" manifest.json "$cid.json" "$diff"
  mv "$out.tmp" "$out"
  rm -rf "$t"
}

# cached_image NAME KEY BUILDER...: the archive $cache/images/NAME-KEY.tar, made by BUILDER (called
# with the output path appended) when absent; prints its path.
cached_image() {
  local name=$1 key=$2; shift 2
  local out="$cache/images/$name-$key.tar"
  mkdir -p "$cache/images"
  if [[ ! -f "$out" ]]; then
    rm -f "$cache/images/$name"-*.tar
    "$@" "$out"
  fi
  echo "$out"
}

# static_image REF ENTRYPOINT-JSON USER FILE:PATH_IN_IMAGE... OUT: a one-binary image.
static_image() {
  local ref=$1 entry=$2 user=$3; shift 3
  local out=${!#}
  local root
  root=$(scratch)
  local f
  for f in "${@:1:$#-1}"; do
    mkdir -p "$root/$(dirname "${f#*:}")"
    cp -L "${f%%:*}" "$root/${f#*:}"
  done
  mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
  docker_archive "$ref" "$root" \
    "$(jq -n --argjson e "$entry" --arg u "$user" \
        '{Entrypoint: $e, User: $u, Env: ["PATH=/usr/local/bin:/usr/bin:/bin"]}')" "$out"
  rm -rf "$root"
}

# The libraries (with the dynamic loader) that the ELF files given need, copied into ROOT at their
# paths: for binaries from Debian and for the JDK.
copy_libraries() {
  local root=$1; shift
  local lib
  for lib in $(ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(/ {print $1}' | sort -u); do
    [[ "$lib" != "$root"/* ]] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# pause, from Kubernetes' own source (build/pause/linux/pause.c in the k8s.io/kubernetes module),
# compiled static as upstream's Makefile does.
pause_image() {
  local out=$1 src
  src=$(cd "$here/kube-go/1.36" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
  [[ -f "$src" ]] || die "no pause.c in the k8s.io/kubernetes module ($src)"
  local t
  t=$(scratch)
  gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-ema" -o "$t/pause" "$src" || die "gcc could not build pause.c"
  static_image "$PAUSE_IMAGE" '["/pause"]' 65535 "$t/pause:/pause" "$out"
  rm -rf "$t"
}

# etcd VERSION-LINE (3.5, 3.6, 3.7) from etcd-bin.sh, at /usr/local/bin as in etcd's own image.
etcd_image() {
  local line=$1 out=$2 bin root
  bin=$("$here/etcd-bin.sh" "$line") || die "no etcd $line for its image"
  root=$(scratch)
  mkdir -p "$root/usr/local/bin" "$root/var/lib/etcd" "$root/tmp"
  cp -L "$bin" "$root/usr/local/bin/etcd"
  [[ ! -x "${bin}ctl" ]] || cp -L "${bin}ctl" "$root/usr/local/bin/etcdctl"
  copy_libraries "$root" "$root/usr/local/bin/etcd"
  chmod 1777 "$root/tmp"
  docker_archive "$(etcd_ref "$line")" "$root" \
    '{"Entrypoint": ["/usr/local/bin/etcd"], "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"]}' "$out"
  rm -rf "$root"
}

# The tag a user writes for etcd's image (the chart's etcd.image.tag): v<the version it holds>.
etcd_tag() {
  local bin
  bin=$("$here/etcd-bin.sh" "$1") || die "no etcd $1"
  echo "v$("$bin" --version | sed -n 's/^etcd Version: //p')"
}
etcd_ref() { echo "$ETCD_REPOSITORY:$(etcd_tag "$1")"; }

busybox_image() {
  local out=$1 root
  root=$(scratch)
  mkdir -p "$root/bin" "$root/tmp"
  cp "$bins/busybox" "$root/bin/busybox"
  local a
  for a in sh mkdir rm rmdir chmod chown ls cat echo env sleep mv cp test true false; do
    ln -s busybox "$root/bin/$a"
  done
  docker_archive "$BUSYBOX_IMAGE" "$root" '{"Cmd": ["sh"], "Env": ["PATH=/bin"]}' "$out"
  rm -rf "$root"
}

# --- the agent's image: the Dockerfile's run stage, carried out here ---------------------------
# No Docker engine or registry here, so the Dockerfile's run stage (the last FROM) is read and
# carried out by this function, instruction by instruction: COPY --from=build, USER, RUN (with its
# bind mounts), EXPOSE, ENTRYPOINT, CMD. Any other instruction there stops it (exit 2), so the
# Dockerfile stays the one recipe. What differs from a user's `docker build`, and only that:
#   - the base gcr.io/distroless/java25-debian13:nonroot is a stand-in assembled here: the machine's
#     Temurin 25 JDK ($JAVA25_HOME) at /usr/lib/jvm/temurin25 with /usr/bin/java, the glibc and
#     other libraries it links (copied from this Debian), the CA bundle, /etc/passwd and /etc/group
#     with nonroot (65532), /tmp, /home/nonroot; config Env PATH, User 65532, WorkingDir as
#     distroless has them;
#   - the build stage is the jar `./mvnw package` made (agent/target), and its native part taken
#     from that jar, as the build stage's RUN does;
#   - the training RUN's mounts: training-shell's /busybox is Debian's busybox-static with its
#     applets, training-etcd's etcd is etcd-bin.sh's 3.6; the RUN itself runs in a chroot of the
#     image in new mount, PID and network namespaces, as root (the Dockerfile's USER 0).
agent_image() {
  local out=$1
  local dockerfile="$root_dir/Dockerfile" jar="$root_dir/agent/target/etcd-member-agent.jar"
  local t
  t=$(scratch)
  local root="$t/rootfs"
  java_base "$root"
  # the build stage's /out, as its RUN leaves it
  mkdir -p "$t/build/out/native"
  cp "$jar" "$t/build/out/etcd-member-agent.jar"
  (cd "$t" && unzip -q -o "$jar" 'com/sun/jna/linux-x86-64/libjnidispatch.so' -d "$t/jna") \
    || die "no libjnidispatch.so for linux-x86-64 in $jar"
  cp "$t/jna/com/sun/jna/linux-x86-64/libjnidispatch.so" "$t/build/out/native/"
  # stand-ins for the training stages
  mkdir -p "$t/training-shell/busybox" "$t/training-etcd/usr/local/bin"
  cp "$bins/busybox" "$t/training-shell/busybox/busybox"
  local a
  for a in $("$bins/busybox" --list); do
    [[ "$a" == busybox ]] || ln -sf busybox "$t/training-shell/busybox/$a"
  done
  cp -L "$("$here/etcd-bin.sh" 3.6)" "$t/training-etcd/usr/local/bin/etcd"

  local user=65532:65532 entry=null cmd=null expose='{}' keyword args
  while IFS= read -r line; do
    keyword=${line%% *}; args=${line#* }
    case "$keyword" in
      FROM) ;;
      COPY)
        [[ "$args" =~ ^--from=build\ ([^ ]+)\ ([^ ]+)$ ]] || die "Dockerfile: unsupported COPY in the run stage: $args"
        mkdir -p "$root$(dirname "${BASH_REMATCH[2]}")"
        cp "$t/build${BASH_REMATCH[1]}" "$root${BASH_REMATCH[2]}" ;;
      USER) user=$args ;;
      RUN) dockerfile_run "$t" "$root" "$user" "$args" ;;
      EXPOSE) expose=$(jq -n --arg p "$args/tcp" '{($p): {}}') ;;
      ENTRYPOINT) entry=$args ;;
      CMD) cmd=$args ;;
      *) die "Dockerfile: kube-node.sh cannot carry out '$keyword' in the run stage; teach agent_image or build with a Docker engine" ;;
    esac
  done < <(dockerfile_run_stage "$dockerfile")
  [[ "$entry" != null ]] || die "Dockerfile: the run stage has no ENTRYPOINT"
  docker_archive "$AGENT_IMAGE" "$root" "$(jq -n --argjson e "$entry" --argjson c "$cmd" \
      --arg u "$user" --argjson x "$expose" \
      '{Entrypoint: $e, Cmd: $c, User: $u, ExposedPorts: $x, WorkingDir: "/home/nonroot",
        Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
              "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"]}')" "$out"
  rm -rf "$t"
}

# The run stage's instructions, one a line (continuations joined, comments dropped).
dockerfile_run_stage() {
  sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$1" | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$' \
    | sed 's/[[:space:]]\+/ /g' | awk '/^FROM /{n=NR} {l[NR]=$0} END{for(i=n;i<=NR;i++) print l[i]}'
}

# The stand-in for gcr.io/distroless/java25-debian13:nonroot (see agent_image).
java_base() {
  local root=$1 jdk="${JAVA25_HOME:-$(ls -d /usr/lib/jvm/temurin-25* 2>/dev/null | head -n1)}"
  [[ -x "$jdk/bin/java" ]] || die "no Java 25 for the agent's image: set JAVA25_HOME (a Temurin 25 JDK)"
  mkdir -p "$root/usr/lib/jvm" "$root/usr/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot"
  cp -a "$jdk" "$root/usr/lib/jvm/temurin25"
  rm -rf "$root/usr/lib/jvm/temurin25/"{man,include,jmods,lib/src.zip}
  ln -s /usr/lib/jvm/temurin25/bin/java "$root/usr/bin/java"
  copy_libraries "$root" $(find "$root/usr/lib/jvm/temurin25" -type f \( -name '*.so' -o -path '*/bin/*' \))
  cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/" 2>/dev/null || true
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  chown 65532:65532 "$root/home/nonroot"
}

# dockerfile_run WORK ROOT USER ARGS: one RUN of the run stage: its bind mounts, then its exec-form
# command in a chroot of ROOT (new mount, PID and network namespaces).
dockerfile_run() {
  local t=$1 root=$2 user=$3 args=$4
  [[ "$user" == 0 || "$user" == 0:0 || "$user" == root ]] || die "Dockerfile: RUN as '$user' is not supported here (only as root)"
  local mounts=() rest=$args m
  while [[ "$rest" =~ ^--mount=([^ ]+)\ (.*)$ ]]; do
    m=${BASH_REMATCH[1]}; rest=${BASH_REMATCH[2]}
    local from="" source="" target=""
    local kv
    for kv in ${m//,/ }; do
      case "$kv" in
        type=bind) ;;
        from=*) from=${kv#from=} ;;
        source=*) source=${kv#source=} ;;
        target=*) target=${kv#target=} ;;
        *) die "Dockerfile: unsupported RUN mount option '$kv'" ;;
      esac
    done
    local src
    case "$from" in
      "") src="$root_dir/$source" ;;
      training-shell|training-etcd) src="$t/$from$source" ;;
      *) die "Dockerfile: RUN mounts from unknown stage '$from'" ;;
    esac
    [[ -e "$src" ]] || die "Dockerfile: RUN mount source $src is missing"
    mounts+=("$src:$target")
  done
  [[ "$rest" == \[* ]] || die "Dockerfile: only exec-form RUN is supported here: $rest"
  local argv=()
  mapfile -t argv < <(jq -r '.[]' <<<"$rest")
  local script="$t/run.sh"
  {
    echo 'set -eu'
    echo "mount --make-rprivate /"
    for m in "${mounts[@]}"; do
      local s=${m%%:*} d=${m#*:}
      if [[ -d "$s" ]]; then echo "mkdir -p '$root$d'"; else echo "mkdir -p '$root$(dirname "$d")'; touch '$root$d'"; fi
      echo "mount --bind -o ro '$s' '$root$d'"
    done
    echo "mkdir -p '$root/proc' '$root/dev'; mount -t proc proc '$root/proc'; mount --rbind /dev '$root/dev'"
    echo 'ip link set lo up'
    printf 'exec chroot %q' "$root"; printf ' %q' "${argv[@]}"; echo
  } >"$script"
  unshare --mount --pid --net --fork bash "$script" >"$t/run.log" 2>&1 \
    || { tail -n 20 "$t/run.log" >&2; die "Dockerfile: the run stage's RUN failed (log above)"; }
  # what the mounts left behind: empty mount points, as BuildKit removes them
  for m in "${mounts[@]}"; do
    local d=${m#*:}
    rm -rf "${root:?}$d"
    rmdir -p "$root$(dirname "$d")" 2>/dev/null || true
  done
  rmdir "$root/proc" "$root/dev" 2>/dev/null || true
}
