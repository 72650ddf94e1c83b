#!/bin/bash
# Runs other projects' Mountebank test suites against Mountebank 2.9.1 and against mockd, one
# engine after the other (same commands, same ports), and prints each suite's counts per engine.
# Nothing of theirs is copied into this repository: give a directory holding checkouts named
#   gobank             github.com/durmaze/gobank           Go client, ginkgo specs (MOUNTEBANK_URI)
#   pay-run-amock      github.com/alphagov/pay-run-amock   spec/equality-with-mountebank.spec.js
#   rift               github.com/EtaCassiopeia/rift       tests/compatibility: run-tests.sh and the
#                                                          cucumber suite, both side by side
#   mountebank-client  github.com/vgcpaulino/mountebank-client   jest unit + integration projects
#   mountebank-helper  github.com/Tzinov15/mountebank-helper     mocha
#   mbtest             github.com/brunns/mbtest            Python client, pytest tests/integration
#   mbgo               github.com/senseyeio/mbgo           Go client, go test -tags=integration
#   ts-mountebank      github.com/AngelaE/ts-mountebank    npm @anev/ts-mountebank, mocha integration-tests
#   mountebank-gem     github.com/CoderKungfu/mountebank-gem   Ruby client, rspec
#   py-mb-mocks-manager  github.com/oleksandr-draha/py-mb-mocks-manager   Python (PyPI
#                      mountebank-mocks-manager): its example records through a proxy, then replays
#   mountebank-showcase  github.com/vgcpaulino/mountebank-showcase   jest examples (axios)
#
#   scripts/client-suites.sh DIR [gobank|amock|rift|rift-bdd|mbclient|mbhelper|mbtest|mbgo|tsmb|mbgem|mmm|showcase ...]
#
# Each suite runs in a scratch copy, adapted only where it would otherwise start Mountebank itself
# (docker, testcontainers, an in-process mb): the server under test is started here instead.
# rift's suites compare two servers at once: Mountebank listens on 127.0.0.1 and mockd on 127.0.0.2,
# both with the admin API on 2525 and imposters on the ports the tests name (their docker port
# offset of 1000 is dropped). Ports used: 2525, 3000-3010, 4545-4547, 7117, 1112, 8080-8081 (mbgo),
# 12345-12346 (tsmb), 50517-50519 (mmm), 4540-4541 (showcase) and a few more the suites pick; the script refuses to start when 2525 is taken.
# Needs Go, Node.js/npm, curl, jq and, for rift-bdd, cargo (it builds a cucumber harness: minutes);
# for mbtest, python3 with venv (its packages and httpbin, served on 127.0.0.1:8088 in place of its
# docker one, come from PyPI; it starts `mb` itself from PATH, on 2525-2527 and 4567; mmm's packages
# come from PyPI too); for mbgem,
# Ruby with Debian's ruby-rspec, ruby-faraday, ruby-faraday-middleware, ruby-dotenv and pry (its
# Gemfile's pins are older; the gem itself is loaded from the checkout). Not part of `make test`.
set -u
dir=$(cd "${1:?usage: scripts/client-suites.sh DIR [suite ...]}" && pwd)
shift
suites=${*:-gobank amock rift mbclient mbhelper mbgo tsmb}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/client-suites.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

if ss -ltn | grep -q '[:.]2525 '; then
	echo "port 2525 is in use; stop what listens there first" >&2
	exit 1
fi
mb=${MB:-$root/test/compat/node_modules/.bin/mb}
if [ ! -x "$mb" ]; then
	(cd "$root/test/compat" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || exit 1
fi
(cd "$root" && go build -o "$work/mockd" ./cmd/mockd) || exit 1

# start ENGINE HOST: an admin API on HOST:2525 (localhost: --localOnly, as the suites' clients may
# resolve localhost to either loopback address), waits until it answers.
start() {
	local engine=$1 host=$2 where
	if [ "$host" = localhost ]; then where=--localOnly; else where="--host $host"; fi
	if [ "$engine" = mb ]; then
		(cd "$work" && exec "$mb" start --port 2525 $where --allowInjection --nologfile) >"$work/$engine-$host.log" 2>&1 &
	else
		"$work/mockd" start --port 2525 $where --allowInjection >"$work/$engine-$host.log" 2>&1 &
	fi
	pids="$pids $!"
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "http://$host:2525/" && return 0
		sleep 0.1
	done
	echo "$engine did not start on $host:2525" >&2
	return 1
}
stop() {
	for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	pids=
}
# each SUITE ENGINE COMMAND...: runs COMMAND against ENGINE alone on localhost:2525.
each() {
	local suite=$1 engine=$2
	shift 2
	start "$engine" localhost || return
	"$@" >"$work/$suite.$engine.out" 2>&1
	echo "  $engine (exit $?): $(grep -E -i "$summary" "$work/$suite.$engine.out" | tr -s ' \n' ' ' | sed 's/\x1b\[[0-9;]*m//g')"
	stop
}
copy() { rm -rf "$work/$1" && cp -R "$dir/$2" "$work/$1" && cd "$work/$1"; }

for s in $suites; do
	echo "== $s"
	case $s in
	gobank)
		copy gobank gobank || continue
		[ -f go.mod ] || { go mod init github.com/durmaze/gobank && GOFLAGS=-mod=mod go mod tidy; } >/dev/null 2>&1
		summary='Passed|^(ok|FAIL) '
		for e in mb mockd; do each gobank $e env MOUNTEBANK_URI=http://localhost:2525 go test -count=1 -v ./...; done
		;;
	amock)
		copy amock pay-run-amock || continue
		summary='^# (pass|fail) '
		for e in mb mockd; do each amock $e env TEST_MB=true TEST_SELF=false node --test spec/equality-with-mountebank.spec.js; done
		;;
	rift | rift-bdd)
		copy rift rift/tests/compatibility || continue
		# 127.0.0.1 is "mountebank", 127.0.0.2 is "rift"; both use the same imposter ports.
		sed -i -e 's#localhost:2525#127.0.0.1:2525#g' -e 's#localhost:3525#127.0.0.2:2525#g' \
			-e 's#\(MB_IMPOSTER_BASE\|mb_imposter_base\)\(.*\)http://localhost#\1\2http://127.0.0.1#' \
			-e 's#\(RIFT_IMPOSTER_BASE\|rift_imposter_base\)\(.*\)http://localhost#\1\2http://127.0.0.2#' \
			-e 's#localhost:\(454[5-7]\)#127.0.0.1:\1#g' -e 's#localhost:55\(4[5-7]\)#127.0.0.2:45\1#g' \
			-e 's#\(45[45][5-7]\)) echo 55\(4[5-7]\)#\1) echo 45\2#' \
			-e 's#PORT_OFFSET: u16 = 1000#PORT_OFFSET: u16 = 0#' run-tests.sh src/world.rs
		start mb 127.0.0.1 && start mockd 127.0.0.2 || continue
		if [ "$s" = rift ]; then
			bash run-tests.sh >"$work/rift.out" 2>&1
			echo "  exit $?: $(grep -E 'Passed:|Failed:|Skipped:' "$work/rift.out" | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' \n' ' ')"
			grep -F '[FAIL]' "$work/rift.out" | sed 's/\x1b\[[0-9;]*m//g' | head -40
		else
			cargo test --test compatibility >"$work/rift-bdd.out" 2>&1
			echo "  exit $?: $(grep -E '^[0-9]+ (features|scenarios|steps)' "$work/rift-bdd.out" | tr -s ' \n' ' ')"
			grep -E -B2 -A6 'Step failed|✘' "$work/rift-bdd.out" | head -200
		fi
		stop
		;;
	mbclient)
		copy mbclient mountebank-client || continue
		# mb-graphql (a custom protocol only one unit test names) is not in the npm registry; jest's
		# globalSetup would start an in-process mb on 2525.
		sed -i '/"mb-graphql"/d' package.json && rm -f yarn.lock
		npm install --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null 2>&1
		cat >jest.ext.config.js <<-'EOF'
			const base = require('./jest.config.js');
			const integ = { ...base.projects.find((p) => p.id === 'integration') };
			delete integ.globalSetup;
			delete integ.globalTeardown;
			module.exports = { projects: [base.projects.find((p) => p.id === 'unit'), integ] };
		EOF
		summary='^Tests:'
		for e in mb mockd; do each mbclient $e npx jest --config jest.ext.config.js --runInBand; done
		;;
	mbhelper)
		copy mbhelper mountebank-helper || continue
		# Its package.json names Mountebank's GitHub head; the published 2.9.1 stands in.
		sed -i 's#"mountebank": "bbyars/mountebank"#"mountebank": "2.9.1"#' package.json && rm -f package-lock.json yarn.lock
		npm install --no-audit --no-fund --loglevel=error >/dev/null 2>&1
		summary='passing|failing'
		# "when Mountebank is not running" must run with nothing on 2525.
		./node_modules/mocha/bin/mocha --grep 'not running' test/*.test.js >"$work/mbhelper.none.out" 2>&1
		echo "  no server: $(grep -E "$summary" "$work/mbhelper.none.out" | tr -s ' \n' ' ')"
		for e in mb mockd; do each mbhelper $e ./node_modules/mocha/bin/mocha --grep 'not running' --invert test/*.test.js; done
		;;
	mbtest)
		copy mbtest mbtest || continue
		python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q -e . pytest pytest-docker contexttimer \
			trustme furl polyfactory pytest-httpx2 beautifulsoup4 httpbin gunicorn >/dev/null 2>&1 || continue
		# Its conftest asks docker for httpbin; a local one stands in (its page title is not
		# httpbin.org's, so test_proxy's 3 title checks fail on every engine).
		cat >tests/integration/conftest.py <<-'EOF'
			import os
			import pytest
			from yarl import URL
			from mbtest import server

			@pytest.fixture(scope="session")
			def mock_server(request):
			    return server.mock_server(request)

			@pytest.fixture(scope="session")
			def httpbin():
			    return URL(os.environ["HTTPBIN_URL"])
		EOF
		"$work/venv/bin/gunicorn" -b 127.0.0.1:8088 -w 1 httpbin:app >"$work/httpbin.log" 2>&1 &
		pids="$pids $!"
		mkdir -p "$work/bin-mb" "$work/bin-mockd"
		ln -sf "$mb" "$work/bin-mb/mb" && ln -sf "$work/mockd" "$work/bin-mockd/mb"
		summary='^[0-9]+ (passed|failed)'
		# mbtest starts mb itself (with --datadir .mbdb), from PATH.
		for e in mb mockd; do
			rm -rf .mbdb
			PATH="$work/bin-$e:$PATH" HTTPBIN_URL=http://127.0.0.1:8088 "$work/venv/bin/pytest" -p no:cacheprovider \
				-o log_cli=false -q tests/integration >"$work/mbtest.$e.out" 2>&1
			echo "  $e (exit $?): $(grep -E "$summary" "$work/mbtest.$e.out") $(grep -E '^FAILED' "$work/mbtest.$e.out" | cut -d' ' -f2 | tr '\n' ' ')"
		done
		stop
		;;
	mbgo)
		copy mbgo mbgo || continue
		# Its Makefile starts a docker mb 2.1.2; the server under test stands in. Its logs test
		# expects 2.1.2's first lines and, against mb --nologfile, panics and stops the package.
		summary='^(ok|FAIL)[[:space:]]'
		for e in mb mockd; do
			each mbgo $e go test -count=1 -v -vet=off -tags=integration -run '_Integration$' \
				-skip '^TestClient_Logs_Integration$' ./...
			echo "    $(grep -c -E '^ *--- PASS' "$work/mbgo.$e.out") passed: failed $(grep -E '^ *--- FAIL' "$work/mbgo.$e.out" | awk '{print $3}' | tr '\n' ' ')"
		done
		;;
	tsmb)
		copy tsmb ts-mountebank || continue
		# Built with npm in place of its pnpm workspace: the client (project/) is compiled and linked
		# into integration-tests, which would otherwise start its own mb (a devDependency).
		(cd project && npm install --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null 2>&1 && npx tsc) || continue
		cd integration-tests && sed -i '/"mountebank":/d' package.json
		npm install --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null 2>&1
		mkdir -p node_modules/@anev && ln -sfn ../../../project node_modules/@anev/ts-mountebank && npx tsc || continue
		summary='passing|failing'
		for e in mb mockd; do each tsmb $e npx mocha --recursive ./dist; done
		;;
	mbgem)
		copy mbgem mountebank-gem || continue
		# Ruby 3's open() no longer opens URLs: its spec helper's fetch goes through URI.open.
		sed -i 's/^  open(uri)\.read/  URI.open(uri).read/' spec/spec_helper.rb
		summary='^[0-9]+ examples'
		for e in mb mockd; do
			each mbgem $e rspec -Ilib
			echo "    failed: $(grep -E '^rspec ' "$work/mbgem.$e.out" | cut -d' ' -f2 | tr '\n' ' ')"
		done
		;;
	mmm)
		copy mmm py-mb-mocks-manager || continue
		python3 -m venv "$work/venv-mmm" && "$work/venv-mmm/bin/pip" install -q --no-deps -e . >/dev/null 2>&1 &&
			"$work/venv-mmm/bin/pip" install -q dpath filelock funcy furl jsonpath-ng lxml pathvalidate \
				pytest python-dateutil requests xmltodict flask >/dev/null 2>&1 || continue
		py="$work/venv-mmm/bin/python"
		# Its example runs in docker compose: alice (50517) calls bob through the imposter the
		# manager creates on 50518 from imposters/proxies/bob.json. Here bob listens on 50519, the
		# proxy's "to". In proxy mode (force_proxy) the test records bob's answers through the
		# proxy and the manager writes them as mocks; without force_proxy, bob stopped, it replays them.
		for e in mb mockd; do
			rm -rf "$work/mmm-$e" && cp -R example "$work/mmm-$e" && cd "$work/mmm-$e" && git init -q . || continue
			sed -i 's#"to": "http://bob:50518/"#"to": "http://127.0.0.1:50519/"#' imposters/proxies/bob.json
			BOB_PORT=50519 PYTHONPATH=. "$py" -c 'from mmm_example.workers import run_bob_server as r; r()' >bob.log 2>&1 &
			bob=$!
			BOB_PORT=50518 PYTHONPATH=. "$py" -c 'from mmm_example.workers import run_alice_server as r; r()' >alice.log 2>&1 &
			alice=$!
			pids="$pids $bob $alice"
			for p in 50519 50517; do # bob, then alice (a Flask app takes a second or more to start)
				for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$p/" && break; sleep 0.1; done
			done
			start "$e" localhost || continue
			MOUNTEBANK_HOST=127.0.0.1 BOB_PORT=50518 "$py" -m pytest -p no:cacheprovider -q tests >"$work/mmm.$e.record.out" 2>&1
			kill "$bob"
			sed -i '/@pytest.mark.force_proxy/d' tests/test_example.py
			MOUNTEBANK_HOST=127.0.0.1 BOB_PORT=50518 "$py" -m pytest -p no:cacheprovider -q tests >"$work/mmm.$e.replay.out" 2>&1
			echo "  $e: record $(grep -E '^[0-9]+ (passed|failed)' "$work/mmm.$e.record.out" | cut -d' ' -f1-2 | tr -d ,), replay $(grep -E '^[0-9]+ (passed|failed)' "$work/mmm.$e.replay.out" | cut -d' ' -f1-2 | tr -d ,)"
			kill "$alice"
			stop
			cd "$work/mmm" || break
		done
		# The mocks each engine's proxy recorded, apart from bob's Date and the proxy's timing.
		diff -r -I '"Date":' -I '"_proxyResponseTime":' "$work/mmm-mb/imposters" "$work/mmm-mockd/imposters" >"$work/mmm.diff" &&
			echo "  recorded mocks: the same on both" || { echo "  recorded mocks differ:"; head -40 "$work/mmm.diff"; }
		;;
	showcase)
		copy showcase mountebank-showcase || continue
		# Its jest globalSetup starts mb (npm run mb:start): the server under test stands in.
		sed -i '/"mountebank":/d' package.json && rm -f package-lock.json
		npm install --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null 2>&1
		cat >jest.ext.config.js <<-'EOF'
			const { globalSetup, globalTeardown, ...rest } = require('./jest.config.js');
			module.exports = rest;
		EOF
		summary='passing|failing|pending'
		for e in mb mockd; do
			each showcase $e npx jest --config jest.ext.config.js --runInBand
			grep -E '✘ .* > ' "$work/showcase.$e.out" | sed 's/^ */    failed: /'
		done
		;;
	*) echo "  unknown suite $s" ;;
	esac
	cd "$work" || exit 1
done
