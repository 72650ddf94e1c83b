#!/bin/sh
# Writes mockd's shell completions (bash, zsh, fish) to completions/ for the release archives.
set -eu
cd "$(dirname "$0")/../.."
rm -rf completions
mkdir -p completions
for sh in bash zsh fish; do
  go run ./cmd/mockd completion "$sh" >"completions/mockd.$sh"
done
