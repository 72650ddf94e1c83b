#!/usr/bin/env python3
"""Differential probe of the admin API: each case of a case file runs against Mountebank
(127.0.0.1) and mockd (127.0.0.2), on the same ports, each from a fresh state (DELETE /imposters,
then a base imposter unless the case says base=False). A Mountebank that died or stopped
answering is restarted before the next case. Compared: status, Content-Type, body (JSON parsed,
host names and `stack` normalised) and whether GET /imposters?replayable=true changed.

  MOCKD=/path/to/mockd python3 scripts/diffprobe/probe.py scripts/diffprobe/cases_admin.py [REGEX]

Environment: MOCKD (required), MB (default test/compat/node_modules/.bin/mb; run npm ci there),
PROBE_PORT (admin port of both, default 25600; every 256xx number in a case moves with it),
NOINJ=1 (no --allowInjection), EXTRA (more flags for both), APIKEY_SEND (x-api-key of the
harness's own requests), PROBE_WORK (working directory, default a temporary one).
"""
import http.client, json, os, subprocess, sys, tempfile, time, re, socket

ADMIN = int(os.environ.get('PROBE_PORT', '25600'))
HERE = os.path.dirname(os.path.abspath(__file__))
MB = os.environ.get('MB', os.path.join(HERE, '..', '..', 'test', 'compat', 'node_modules', '.bin', 'mb'))
MOCKD = os.environ.get('MOCKD', '')
WORK = os.environ.get('PROBE_WORK') or tempfile.mkdtemp(prefix='diffprobe-')
os.makedirs(WORK, exist_ok=True)


def shift(text):
    """Moves every 256xx port number of a case by PROBE_PORT - 25600."""
    if ADMIN == 25600 or text is None:
        return text
    return re.sub(r'\b256(\d\d)\b', lambda m: str(ADMIN + int(m.group(1))), text)
procs = {}

def start(engine):
    host = '127.0.0.1' if engine == 'mb' else '127.0.0.2'
    if engine == 'mb':
        cmd = [MB, 'start', '--port', str(ADMIN), '--host', host, '--nologfile'] + ([] if os.environ.get('NOINJ') else ['--allowInjection']) + os.environ.get('EXTRA','').split()
    else:
        cmd = [MOCKD, 'start', '--port', str(ADMIN), '--host', host] + ([] if os.environ.get('NOINJ') else ['--allowInjection']) + os.environ.get('EXTRA','').split()
    log = open(f'{WORK}/{engine}.log', 'ab')
    p = subprocess.Popen(cmd, cwd=WORK, stdout=log, stderr=log, start_new_session=True)
    procs[engine] = p
    for _ in range(200):
        try:
            s = socket.create_connection((host, ADMIN), timeout=0.5); s.close(); return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f'{engine} did not start')

def stop(engine):
    p = procs.get(engine)
    if p and p.poll() is None:
        os.killpg(p.pid, 9); p.wait()

def host(engine):
    return '127.0.0.1' if engine == 'mb' else '127.0.0.2'

def req(engine, method, path, body=None, headers=None, timeout=5, harness=True):
    c = http.client.HTTPConnection(host(engine), ADMIN, timeout=timeout)
    h = {} if headers is None else dict(headers)
    if harness and os.environ.get('APIKEY_SEND'):
        h.setdefault('x-api-key', os.environ['APIKEY_SEND'])
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
        h.setdefault('Content-Type', 'application/json')
    if isinstance(body, str):
        body = shift(body).encode()
    path = shift(path)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    except Exception as e:
        return 'ERR', {}, repr(e).encode()
    finally:
        c.close()

def alive(engine):
    p = procs.get(engine)
    if p is None or p.poll() is not None:
        return False
    st, _, _ = req(engine, 'GET', '/imposters', timeout=3)
    return st == 200

def ensure(engine):
    if not alive(engine):
        stop(engine); start(engine)
        return False
    return True

def norm(data):
    try:
        j = json.loads(data)
    except Exception:
        return data.decode('utf-8', 'replace')
    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items() if k not in ('stack',)}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            v = v.replace('127.0.0.2', 'HOST').replace('127.0.0.1', 'HOST').replace('localhost', 'HOST')
            return v
        return v
    return walk(j)

BASE = {"port": 25610, "protocol": "http", "name": "base", "recordRequests": True,
        "stubs": [{"predicates": [{"equals": {"path": "/a"}}], "responses": [{"is": {"body": "A"}}]},
                  {"responses": [{"is": {"statusCode": 201, "body": "B"}}]}]}

def state(engine):
    st, _, d = req(engine, 'GET', '/imposters?replayable=true')
    return st, norm(d)

def run_case(case):
    out = {}
    rs = {}
    for e in ('mb', 'mockd'):
        rs[e] = not ensure(e)
        req(e, 'DELETE', '/imposters')
    for e in ('mb', 'mockd'):
        restarted = rs[e]
        if case.get('base', True):
            st, _, d = req(e, 'POST', '/imposters', BASE)
            if st != 201:
                out[e] = ('SETUPFAIL', st, d[:200]); continue
        for pre in case.get('pre', []):
            req(e, *pre)
        before = state(e)
        st, h, d = req(e, case['method'], case['path'], case.get('body'), case.get('headers'), harness=False)
        dead = not alive(e)
        after = None if dead else state(e)
        out[e] = dict(status=st, ctype=h.get('content-type'), body=norm(d), changed=(after != before) if after else 'DEAD', restarted=restarted)
    return out

def diff(o):
    a, b = o['mb'], o['mockd']
    if isinstance(a, tuple) or isinstance(b, tuple):
        return ['setup']
    ds = []
    for k in ('status', 'ctype', 'body', 'changed'):
        if a[k] != b[k]:
            ds.append(k)
    return ds

if __name__ == '__main__':
    import importlib.util
    spec = importlib.util.spec_from_file_location('cases', sys.argv[1])
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if not MOCKD:
        raise SystemExit('set MOCKD to the mockd binary to compare')
    start('mb'); start('mockd')
    n = nd = 0
    try:
        for c in m.CASES:
            if only and not re.search(only, c['name']): continue
            n += 1
            o = run_case(c)
            d = diff(o)
            if d:
                nd += 1
                print(f"### {c['name']}: {c['method']} {c['path']} diff={d}")
                print('  body sent:', (c.get('body') if not isinstance(c.get('body'), bytes) else c['body'])[:300] if isinstance(c.get('body'), (str, bytes)) else json.dumps(c.get('body'))[:300], 'hdr', c.get('headers'))
                for e in ('mb', 'mockd'):
                    print(f'  {e}:', json.dumps(o[e], default=str)[:700])
            sys.stdout.flush()
    finally:
        stop('mb'); stop('mockd')
    print(f'{n} cases, {nd} differ')
