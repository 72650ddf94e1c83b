#!/usr/bin/env python3
"""Differential probe of imposters: each case creates its imposter on Mountebank (127.0.0.1) and
mockd (127.0.0.2), sends its raw requests (one connection each) and compares the answers (status
line, headers but Date/Connection/Transfer-Encoding/Content-Length/Keep-Alive, de-chunked body)
and the recorded requests. Same environment as probe.py.

  MOCKD=/path/to/mockd python3 scripts/diffprobe/probe_imp.py scripts/diffprobe/cases_headers.py
"""
import json, os, re, socket, sys, time
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe
from probe import req, start, stop, ensure, norm

PORT = 25630  # moved with PROBE_PORT as the cases' ports are

def raw(engine, data, timeout=3, tcp_mode=False):
    s = socket.create_connection((probe.host(engine), int(probe.shift(str(PORT)))), timeout=timeout)
    s.sendall(data)
    out = b''
    try:
        while True:
            d = s.recv(65536)
            if not d: break
            out += d
            if b'\r\n\r\n' in out:
                head, _, body = out.partition(b'\r\n\r\n')
                if tcp_mode: continue
                m = re.search(rb'(?i)content-length:\s*(\d+)', head)
                if m and len(body) >= int(m.group(1)): break
                if re.search(rb'(?i)transfer-encoding:\s*chunked', head) and body.endswith(b'0\r\n\r\n'): break
    except socket.timeout:
        out += b'' if tcp_mode else b'<TIMEOUT>'
    except ConnectionResetError:
        out += b'<RESET>'
    s.close()
    return out

def send_mail(engine, frm, to, message):
    import smtplib
    try:
        with smtplib.SMTP(probe.host(engine), int(probe.shift(str(PORT))), timeout=5) as c:
            c.sendmail(frm, to, message)
        return 'sent'
    except Exception as e:
        return repr(e)

def parse(resp):
    head, _, body = resp.partition(b'\r\n\r\n')
    lines = head.decode('latin1').split('\r\n')
    hdrs = [l for l in lines[1:] if not re.match(r'(?i)(date|connection|transfer-encoding|content-length|keep-alive):', l)]
    if re.search(rb'(?i)transfer-encoding:\s*chunked', head):
        b2 = b''; rest = body
        while rest:
            sz, _, rest = rest.partition(b'\r\n')
            n = int(sz.split(b';')[0] or b'0', 16)
            if n == 0: break
            b2 += rest[:n]; rest = rest[n+2:]
        body = b2
    # Documented differences left out: the names fasthttp spells itself (README, "Response
    # header names") compare in lower case, and node's stack is left out of 500 bodies.
    hdrs = [re.sub(r'(?i)^(content-type|content-encoding|set-cookie|server):', lambda m: m.group(1).lower() + ':', h) for h in hdrs]
    text = body.decode('latin1')
    if text.startswith('{"errors":'):
        try:
            j = json.loads(text)
            for e in j.get('errors', []):
                if isinstance(e, dict): e.pop('stack', None)
            text = json.dumps(j, separators=(',', ':'))
        except ValueError:
            pass
    return {'status': lines[0], 'headers': hdrs, 'body': text}

def recorded(engine):
    st, _, d = req(engine, 'GET', f'/imposters/{PORT}')
    if st != 200:
        return {'status': st, 'body': d[:200].decode('latin1')}  # e.g. Mountebank died on the request
    j = json.loads(d)
    reqs = j.get('requests', [])
    for r in reqs:
        r.pop('timestamp', None); r.pop('requestFrom', None); r.pop('ip', None)
        for k in ('messageId', 'date'):  # smtp: made by the client per message
            r.pop(k, None)
    return reqs

def run(case):
    out = {}
    for e in ('mb', 'mockd'):
        ensure(e); req(e, 'DELETE', '/imposters')
    for e in ('mb', 'mockd'):
        imp = dict(case['imposter']); imp['port'] = PORT; imp.setdefault('protocol', 'http'); imp.setdefault('recordRequests', True)
        st, _, d = req(e, 'POST', '/imposters', imp)
        if st != 201:
            out[e] = {'setup': st, 'body': d.decode()[:300]}; continue
        if case.get('smtp'):  # smtp: each request (from, [to], message) sent with smtplib
            answers = [send_mail(e, *r) for r in case['requests']]
        elif case.get('tcp'):  # tcp: the bytes read within readMs (default 500), not parsed
            answers = [raw(e, r, timeout=case.get('readMs', 500) / 1000, tcp_mode=True).decode('latin1') for r in case['requests']]
        else:
            answers = [parse(raw(e, r)) for r in case['requests']]
        out[e] = {'answers': answers, 'recorded': recorded(e) if case.get('record', True) else None}
    return out

if __name__ == '__main__':
    import importlib.util
    spec = importlib.util.spec_from_file_location('cases', sys.argv[1])
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if not probe.MOCKD:
        raise SystemExit('set MOCKD to the mockd binary to compare')
    for name, text in getattr(m, 'FILES', {}).items():
        with open(os.path.join(probe.WORK, name), 'w') as f:
            f.write(text)
    start('mb'); start('mockd')
    n = nd = 0
    try:
        for c in m.CASES:
            if only and not re.search(only, c['name']): continue
            n += 1
            o = run(c)
            if o.get('mb') != o.get('mockd'):
                nd += 1
                print(f"### {c['name']}")
                a, b = o.get('mb'), o.get('mockd')
                if 'answers' in a and 'answers' in b:
                    for i, (x, y) in enumerate(zip(a['answers'], b['answers'])):
                        if x != y: print(f'  answer {i}: mb={json.dumps(x)[:600]}\n            mockd={json.dumps(y)[:600]}')
                    if a['recorded'] != b['recorded']:
                        print(f"  recorded: mb={json.dumps(a['recorded'])[:900]}\n            mockd={json.dumps(b['recorded'])[:900]}")
                else:
                    print('  mb', json.dumps(a)[:500]); print('  mockd', json.dumps(b)[:500])
            sys.stdout.flush()
    finally:
        stop('mb'); stop('mockd')
    print(f'{n} cases, {nd} differ')
