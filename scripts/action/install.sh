#!/usr/bin/env bash
# Installs mockd for the GitHub Action: a given binary (MOCKD_BINARY), the release archive for
# the runner's OS and architecture, or `go install` when no archive matches or the download
# fails. Sets the outputs bin and version and puts mockd on the job's PATH.
#
# Environment: MOCKD_VERSION (a release tag such as v1.0.0, "latest", or any version `go install`
# takes; default: the action's own ref), MOCKD_ACTION_REF, MOCKD_BINARY, MOCKD_INSTALL_DIR
# (default $RUNNER_TEMP/mockd/bin), MOCKD_RELEASES_URL (default
# https://github.com/mockd/mockd/releases), and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP,
# GITHUB_ACTION_PATH, GITHUB_OUTPUT, GITHUB_PATH.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/action/lib.sh
. "$here/lib.sh"

module=github.com/mockd/mockd
releases="${MOCKD_RELEASES_URL:-https://github.com/$(printf '%s' "$module" | cut -d/ -f2-)/releases}"
dir="${MOCKD_INSTALL_DIR:-$(state_dir)/bin}"
exe="mockd$(exe_suffix)"
mkdir -p "$dir"

# version: the input, else the action's ref. github.action_ref can be empty inside composite
# actions, so the ref is also read from where the runner put the action: .../_actions/OWNER/REPO/REF.
version="${MOCKD_VERSION:-${MOCKD_ACTION_REF:-}}"
if [ -z "$version" ]; then
  case "${GITHUB_ACTION_PATH:-}" in
    */_actions/*/*/*) version="$(basename "${GITHUB_ACTION_PATH%/stop}")" ;;
  esac
fi
version="${version:-latest}"

finish() {
  local bin="$1" how="$2"
  "$bin" --version >/dev/null || fail "$bin does not run"
  local v
  v="$("$bin" --version | head -n 1)"
  echo "mockd: $how: $v"
  out bin "$bin"
  out version "$v"
  if [ -n "${GITHUB_PATH:-}" ]; then
    dirname "$bin" >>"$GITHUB_PATH"
  fi
  exit 0
}

if [ -n "${MOCKD_BINARY:-}" ]; then
  [ -x "$MOCKD_BINARY" ] || fail "binary $MOCKD_BINARY is not an executable file"
  finish "$(cd "$(dirname "$MOCKD_BINARY")" && pwd)/$(basename "$MOCKD_BINARY")" "using the given binary"
fi

# A pre-seeded install directory (a cache) with this exact version is used as it is.
if [ -x "$dir/$exe" ] && [ "$version" != latest ] &&
  "$dir/$exe" --version 2>/dev/null | head -n 1 | grep -q "^mockd ${version#v} "; then
  finish "$dir/$exe" "already installed in $dir"
fi

os=""
case "${RUNNER_OS:-$(uname -s)}" in
  Linux) os=linux ;;
  macOS | Darwin) os=darwin ;;
  Windows | MINGW* | MSYS* | CYGWIN*) os=windows ;;
esac
arch=""
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64 | amd64) arch=amd64 ;;
  ARM64 | arm64 | aarch64) arch=arm64 ;;
esac

# download: the release archive mockd_OS_ARCH.(tar.gz|zip) of a vX.Y.Z tag or of the latest
# release, checked against the release's checksums.txt.
download() {
  local tmp rc=0
  tmp="$(mktemp -d)" || return 1
  download_into "$tmp" || rc=1
  rm -rf "$tmp"
  return "$rc"
}

# download_into TMP: download, check and install the archive, working in the directory TMP.
download_into() {
  local base asset tmp="$1" prefix=""
  case "$version" in
    latest) base="$releases/latest/download" ;;
    v[0-9]*.[0-9]*.[0-9]*) base="$releases/download/$version" ;;
    # A moving major (v1) or minor (v1.2) tag: the latest release, if it is of that line.
    v[0-9] | v[0-9][0-9] | v[0-9]*.[0-9]*) base="$releases/latest/download" prefix="${version#v}." ;;
    *) echo "mockd: $version is not a release tag"; return 1 ;;
  esac
  [ -n "$os" ] && [ -n "$arch" ] || { echo "mockd: no release archive for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"; return 1; }
  asset="mockd_${os}_${arch}.tar.gz"
  [ "$os" = windows ] && asset="mockd_${os}_${arch}.zip"
  echo "mockd: downloading $base/$asset"
  curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset" || return 1
  curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/checksums.txt" || return 1
  local want got
  want="$(awk -v a="$asset" '$2 == a || $2 == "*"a {print $1}' "$tmp/checksums.txt")"
  if command -v sha256sum >/dev/null; then
    got="$(sha256sum "$tmp/$asset" | awk '{print $1}')"
  else
    got="$(shasum -a 256 "$tmp/$asset" | awk '{print $1}')"
  fi
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "mockd: checksum of $asset does not match checksums.txt"; return 1; }
  case "$asset" in
    # Git Bash's tar (GNU) reads no zip; Windows' own tar.exe (bsdtar) does.
    *.zip) unzip -q -o "$tmp/$asset" "$exe" -d "$tmp" || tar.exe -xf "$tmp/$asset" -C "$tmp" "$exe" || return 1 ;;
    *) tar -xzf "$tmp/$asset" -C "$tmp" "$exe" || return 1 ;;
  esac
  chmod +x "$tmp/$exe"
  if [ -n "$prefix" ] && ! "$tmp/$exe" --version | head -n 1 | grep -qF "mockd $prefix"; then
    echo "mockd: the latest release is not of the $version line: $("$tmp/$exe" --version | head -n 1)"
    return 1
  fi
  mv -f "$tmp/$exe" "$dir/$exe"
}

if download; then
  finish "$dir/$exe" "installed the $version release"
fi

echo "mockd: no release archive to use; building with go install $module/cmd/mockd@$version"
command -v go >/dev/null || fail "no release archive for $version on ${os:-?}/${arch:-?}, and Go is not installed for go install (add actions/setup-go)"
GOBIN="$dir" CGO_ENABLED=0 go install "$module/cmd/mockd@$version" || fail "go install $module/cmd/mockd@$version failed"
finish "$dir/$exe" "built with go install"
