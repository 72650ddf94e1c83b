#!/bin/sh
# Renders packaging/homebrew/mockd.rb for a release: the version (without "v") and the SHA-256
# of each archive, read from the release's checksums.txt.
#
#   scripts/release/homebrew-formula.sh 1.0.0 dist/checksums.txt > mockd.rb
set -eu
version="$1"
checksums="$2"
here="$(dirname "$0")"
formula="$here/../../packaging/homebrew/mockd.rb"
script="s/@VERSION@/${version#v}/g"
for target in darwin_arm64 darwin_amd64 linux_arm64 linux_amd64; do
  sum="$(awk -v a="mockd_${target}.tar.gz" '$2 == a {print $1}' "$checksums")"
  if [ -z "$sum" ]; then
    echo "homebrew-formula: $checksums has no mockd_${target}.tar.gz" >&2
    exit 1
  fi
  script="$script;s/@SHA256_${target}@/$sum/g"
done
sed "$script" "$formula"
