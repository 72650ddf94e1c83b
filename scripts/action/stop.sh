#!/usr/bin/env bash
# Stops the mockd that start.sh started, after saving its journal (every imposter as
# GET /imposters/:port shows it, recorded requests included) to journal.json beside its log.
# Sets the outputs journal and log.
#
# Environment (exported by start.sh): MOCKD_ADMIN_URL, MOCKD_PID, MOCKD_LOG, MOCKD_DIR,
# MOCKD_APIKEY.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/action/lib.sh
. "$here/lib.sh"

dir="$(state_dir)"
admin="${MOCKD_ADMIN_URL:-http://127.0.0.1:2525}"
log="${MOCKD_LOG:-$dir/mockd.log}"
pid="${MOCKD_PID:-$(cat "$dir/mockd.pid" 2>/dev/null || true)}"
journal="$dir/journal.json"
curl_args=(-fsS --max-time 60)
[ -n "${MOCKD_APIKEY:-}" ] && curl_args+=(-H "x-api-key: $MOCKD_APIKEY")

if list="$(curl "${curl_args[@]}" "$admin/imposters")"; then
  {
    printf '{"imposters": ['
    sep=""
    for port in $(printf '%s' "$list" | grep -o '"port": *[0-9]*' | grep -o '[0-9]*$'); do
      printf '%s\n' "$sep"
      curl "${curl_args[@]}" "$admin/imposters/$port"
      sep=","
    done
    printf ']}\n'
  } >"$journal.tmp" && mv "$journal.tmp" "$journal"
  echo "mockd: saved the journal to $journal"
else
  echo "::warning title=mockd::cannot read the imposters from $admin; no journal saved"
fi

if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "::warning title=mockd::mockd (pid $pid) did not stop on SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  echo "mockd: stopped (pid $pid)"
else
  echo "mockd: not running"
fi

out journal "$journal"
out log "$log"
