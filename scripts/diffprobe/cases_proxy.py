# proxy responses: an origin in this process (127.0.0.1, PROBE_PORT + 25) answers by path; each
# case proxies to it and compares the answers and what the proxy recorded (GET /imposters/:port).
import os, socket, threading
from impcases import case_list, request
PORT = int(os.environ.get('PROBE_PORT', '25600')) + 25
ANSWERS = {
    'plain': b'HTTP/1.1 200 OK\r\nX-B: 1\r\nx-a: 2\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
    'json': b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"b":1,"a":[1,2]}',
    'jsontext': b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\n{"a":1}',
    'binary': b'HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 4\r\n\r\n\x00\x01\xff\xfe',
    'gzip': b'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc',
    'repeated': b'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-R: 1\r\nX-R: 2\r\nContent-Length: 0\r\n\r\n',
    'chunked': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n',
    'latin1': b'HTTP/1.1 200 OK\r\nX-L: a\xe9b\r\nContent-Length: 4\r\n\r\nd\xe9f!',
    'status': b'HTTP/1.1 299 Whatever\r\nContent-Length: 0\r\n\r\n',
    'noreason': b'HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n',
    'empty': b'HTTP/1.1 204 No Content\r\n\r\n',
    'close': b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close',
    'utf8': 'HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 8\r\n\r\nünï✓'.encode('utf-8')[:0] + b'HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 8\r\n\r\n' + '\u00fcn\u2713'.encode('utf-8') + b'!!',
    'xml': b'HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: 13\r\n\r\n<a><b>1</b></a>'[:0] + b'HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: 15\r\n\r\n<a><b>1</b></a>',
}
def _serve(c):
    try:
        data = b''
        while b'\r\n\r\n' not in data:
            d = c.recv(65536)
            if not d: return
            data += d
        path = data.split(b' ')[1].decode().lstrip('/').split('?')[0]
        c.sendall(ANSWERS.get(path, b'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'))
    finally:
        c.close()
def _origin():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', PORT)); s.listen(64)
    while True:
        c, _ = s.accept(); threading.Thread(target=_serve, args=(c,), daemon=True).start()
threading.Thread(target=_origin, daemon=True).start()
TO = f'http://127.0.0.1:{PORT}'
CASES, C = case_list()
R = request
for path in ANSWERS:
    for mode in ['proxyOnce', 'proxyAlways', 'proxyTransparent']:
        C(f'{mode} {path}', {"stubs": [{"responses": [{"proxy": {"to": TO, "mode": mode, "predicateGenerators": [{"matches": {"path": True}}]}}]}]}, R('/' + path), R('/' + path))
C('generators query headers body', {"stubs": [{"responses": [{"proxy": {"to": TO, "mode": "proxyAlways", "predicateGenerators": [{"matches": {"query": True, "headers": {"X-Id": True}, "body": True}, "caseSensitive": True}]}}]}]},
  R('/plain?b=1&a=2&b=3', 'X-Id: 7\r\nx-id: 8\r\n', 'POST', 'body'), R('/plain?b=1&a=2&b=3', 'X-Id: 7\r\nx-id: 8\r\n', 'POST', 'body'))
C('generators jsonpath', {"stubs": [{"responses": [{"proxy": {"to": TO, "predicateGenerators": [{"matches": {"body": True}, "jsonpath": {"selector": "$.id"}}]}}]}]},
  R('/json', 'Content-Type: application/json\r\n', 'POST', '{"id":5,"x":1}'), R('/json', 'Content-Type: application/json\r\n', 'POST', '{"id":5,"x":2}'))
C('addWait addDecorate', {"stubs": [{"responses": [{"proxy": {"to": TO, "addDecorateBehavior": "function (config) { config.response.body += '!'; }", "predicateGenerators": [{"matches": {"path": True}}]}}]}]}, R('/plain'), R('/plain'))
C('injectHeaders', {"stubs": [{"responses": [{"proxy": {"to": TO, "mode": "proxyTransparent", "injectHeaders": {"X-Inj": "1", "host": "h"}}}]}]}, R('/plain'))
C('removeProxies replayable', {"stubs": [{"responses": [{"proxy": {"to": TO}}]}]}, R('/json'))
