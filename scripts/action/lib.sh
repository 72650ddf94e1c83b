# shellcheck shell=bash
# Shared by the GitHub Action's scripts (install.sh, start.sh, stop.sh). Sourced, not run.

# out NAME VALUE: set a step output (GITHUB_OUTPUT), or print it when run by hand.
out() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  else
    printf '%s=%s\n' "$1" "$2"
  fi
}

# export_env NAME VALUE: make NAME available to the job's later steps (GITHUB_ENV).
export_env() {
  if [ -n "${GITHUB_ENV:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_ENV"
  fi
}

# summary TEXT: append to the job summary (GITHUB_STEP_SUMMARY).
summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '%s\n' "$1" >>"$GITHUB_STEP_SUMMARY"
  fi
}

fail() {
  echo "::error title=mockd::$1" >&2
  exit 1
}

# state_dir: where the pid file, log and journal go.
state_dir() {
  printf '%s' "${MOCKD_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mockd}"
}

exe_suffix() {
  case "${RUNNER_OS:-$(uname -s)}" in
    Windows | MINGW* | MSYS* | CYGWIN*) printf '.exe' ;;
  esac
}
