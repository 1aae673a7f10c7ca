# Sourced by the fetch scripts: Debian packages downloaded without touching the system's apt
# configuration (a private source list and state dir), from the mirror that the system's own apt
# configuration names.

# The Debian mirror of the system's apt configuration (deb822 `URIs:` or one-line
# `deb URI suite`), leaving out the security archive.
debian_mirror() {
  local etc parts list
  etc=$(apt-config shell X Dir::Etc/d | sed -n "s/^X='\(.*\)'$/\1/p")
  parts="${etc:-/etc/apt/}$(apt-config shell X Dir::Etc::sourceparts | sed -n "s/^X='\(.*\)'$/\1/p")"
  list="${etc:-/etc/apt/}$(apt-config shell X Dir::Etc::sourcelist | sed -n "s/^X='\(.*\)'$/\1/p")"
  {
    cat "$parts"/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
    cat "$list" "$parts"/*.list 2>/dev/null | sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p'
  } | grep -v -e security -e '^$' | head -n1 || true
}

# debian_download WORK SUITE PACKAGE...: downloads the packages' .deb files of SUITE into WORK
# (a fresh directory) and extracts them all into WORK/x; returns 1, saying why, on failure.
debian_download() {
  local work="$1" suite="$2"; shift 2
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg mirror
  command -v apt-get >/dev/null || { echo "apt-get is not available" >&2; return 1; }
  [[ -r "$keyring" ]] || { echo "$keyring is missing" >&2; return 1; }
  mirror=$(debian_mirror)
  [[ -n "$mirror" ]] || { echo "no Debian mirror in the system's apt configuration (no URIs: line)" >&2; return 1; }
  mkdir -p "$work/lists/partial" "$work/archives/partial"
  echo "deb [signed-by=$keyring] $mirror $suite main" > "$work/sources.list"
  local opts=(-q -oDir::Etc::SourceList="$work/sources.list" -oDir::Etc::SourceParts=/dev/null
        -oDir::State::Lists="$work/lists" -oDir::Cache="$work" -oDebug::NoLocking=1
        -oAPT::Sandbox::User=root)
  if ! apt-get "${opts[@]}" update >"$work/update.log" 2>&1; then
    echo "apt-get update for $suite from $mirror failed (see $work/update.log)" >&2
    return 1
  fi
  if ! (cd "$work" && apt-get "${opts[@]}" download "$@" >"$work/download.log" 2>&1); then
    echo "apt-get download $* from $suite at $mirror failed (see $work/download.log)" >&2
    return 1
  fi
  local deb
  rm -rf "$work/x"
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done
}
