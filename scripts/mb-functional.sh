#!/bin/sh
# Runs Mountebank's own functional tests (mbTest/api and mbTest/cli of a Mountebank source
# checkout, tag v2.9.1) against mockd: the black-box suite Mountebank's maintainers run against
# mb, pointed at mockd through its MB_PORT and MB_EXECUTABLE variables. Nothing of Mountebank's is
# copied into this repository; give the path of a checkout (git clone
# https://github.com/bbyars/mountebank && git -C mountebank checkout v2.9.1).
#
#   scripts/mb-functional.sh /path/to/mountebank [api|cli|all]
#
# Needs Node.js and npm (the suite's dependencies are installed into a temporary copy). Ports:
# the admin API on 25393 (MB_PORT), imposters on the ports the tests name (25394–25396, 3000,
# 4545, 5555, 6565, 7575). Expected failures on mockd, each a documented difference (README,
# "Differences from Mountebank"): responses keep the connection alive instead of Connection:
# close (4 injection tests, and the proxy test whose origin is a mockd imposter); custom
# --formatter modules (3);
# and, as for mb itself on a machine whose other addresses route to loopback, the --host and
# IP-blocking tests.
set -eu
src=${1:?usage: scripts/mb-functional.sh /path/to/mountebank-checkout [api|cli|all]}
which=${2:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mb-functional.XXXXXX")
mockd_pid=
cleanup() {
	[ -n "$mockd_pid" ] && kill "$mockd_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

(cd "$root" && go build -o "$work/mockd" ./cmd/mockd)
cp -R "$src/mbTest" "$work/mbTest"
cd "$work/mbTest"
# Their package.json names the checkout itself ("file:.."); the published 2.9.1 stands in.
sed -i.bak 's#"mountebank": "file:..",#"mountebank": "2.9.1",#' package.json
npm install --no-audit --no-fund --loglevel=error >/dev/null

export MB_AIRPLANE_MODE=true MB_PORT=25393 MB_EXECUTABLE="$work/mockd"
status=0
if [ "$which" = api ] || [ "$which" = all ]; then
	"$work/mockd" start --port "$MB_PORT" --allowInjection --localOnly --pidfile "$work/api.pid" >"$work/api-server.log" 2>&1 &
	mockd_pid=$!
	i=0
	until [ -f "$work/api.pid" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	npx mocha --forbid-only --reporter spec 'api/**/*.js' || status=$?
	kill "$mockd_pid" 2>/dev/null || true
	wait "$mockd_pid" 2>/dev/null || true
	mockd_pid=
fi
if [ "$which" = cli ] || [ "$which" = all ]; then
	npx mocha --forbid-only --reporter spec 'cli/**/*.js' || status=$?
fi
exit $status
