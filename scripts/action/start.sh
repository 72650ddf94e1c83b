#!/usr/bin/env bash
# Starts `mockd serve` in the background for the GitHub Action and waits until the admin API
# and every imposter answer. Sets the outputs admin-url, pid, log and dir, and exports
# MOCKD_ADMIN_URL, MOCKD_PID, MOCKD_LOG and MOCKD_DIR for later steps (and the stop action).
#
# Environment: MOCKD_BIN (default: mockd on PATH), MOCKD_CONFIG (config files, directories or
# globs, separated by newlines or spaces), MOCKD_PORT (admin port, default 2525), MOCKD_ARGS
# (more `mockd serve` arguments, split on spaces), MOCKD_TIMEOUT (seconds, default 30),
# MOCKD_DIR (default $RUNNER_TEMP/mockd).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/action/lib.sh
. "$here/lib.sh"

bin="${MOCKD_BIN:-mockd}"
port="${MOCKD_PORT:-2525}"
timeout="${MOCKD_TIMEOUT:-30}"
dir="$(state_dir)"
mkdir -p "$dir"
pidfile="$dir/mockd.pid"
log="$dir/mockd.log"

set -f # globs are mockd's to expand, not the shell's
args=(serve --port "$port" --pidfile "$pidfile")
for c in ${MOCKD_CONFIG:-}; do
  args+=(-c "$c")
done
apikey=""
# mockd logs its ready line ("now taking orders") at info once every configured imposter has
# started; the admin API may answer a moment before that, so both are waited for.
ready_line=yes
# shellcheck disable=SC2206 # split on spaces on purpose (globbing is off)
extra=(${MOCKD_ARGS:-})
for i in "${!extra[@]}"; do
  next="${extra[$((i + 1))]:-}"
  case "${extra[$i]}" in
    --apikey=*) apikey="${extra[$i]#--apikey=}" ;;
    --apikey) apikey="$next" ;;
    --loglevel=warn | --loglevel=error) ready_line=no ;;
    --loglevel) case "$next" in warn | error) ready_line=no ;; esac ;;
  esac
done
args+=("${extra[@]}")
set +f

echo "mockd: $bin ${args[*]}"
nohup "$bin" "${args[@]}" >"$log" 2>&1 &
pid=$!

check=(healthcheck --host 127.0.0.1 --port "$port" --imposters --timeout 2s)
[ -n "$apikey" ] && check+=(--apikey "$apikey")

tail_log() {
  echo "---- last lines of $log ----" >&2
  tail -n 50 "$log" >&2 || true
}

deadline=$((SECONDS + timeout))
ready() {
  if [ "$ready_line" = yes ] && ! grep -q "now taking orders" "$log"; then
    status="no ready line in the log yet"
    return 1
  fi
  status="$("$bin" "${check[@]}" 2>&1)"
}

until ready; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail_log
    fail "mockd exited before it was ready (see its log above)"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    kill "$pid" 2>/dev/null || true
    echo "mockd: last check: $status" >&2
    tail_log
    fail "mockd was not ready after ${timeout}s (the admin API and every imposter must answer)"
  fi
  sleep 0.5
done
echo "mockd: $status"

admin="http://127.0.0.1:$port"
out admin-url "$admin"
out pid "$pid"
out log "$log"
out dir "$dir"
export_env MOCKD_ADMIN_URL "$admin"
export_env MOCKD_PID "$pid"
export_env MOCKD_LOG "$log"
export_env MOCKD_DIR "$dir"
export_env MOCKD_APIKEY "$apikey"
summary "mockd is running: admin API $admin (pid $pid, log $log); ${status#ok: }"
