CASES = []
def C(name, imposter, *requests, **kw):
    CASES.append(dict(name=name, imposter=imposter, requests=[r.encode('latin1') if isinstance(r, str) else r for r in requests], **kw))
def R(path='/', hdrs='', method='GET', body=''):
    cl = f'Content-Length: {len(body.encode("latin1"))}\r\n' if body else ''
    return f'{method} {path} HTTP/1.1\r\nHost: x\r\n{hdrs}{cl}Connection: close\r\n\r\n{body}'
C('header unicode value', {"stubs": [{"responses": [{"is": {"headers": {"X-U": "é✓"}, "body": "x"}}]}]}, R())
C('header latin1 in request recorded', {"stubs": []}, R('/', 'X-L: a\xe9b\r\n'))
C('body latin1 request', {"stubs": []}, R('/', 'Content-Type: text/plain\r\n', 'POST', 'caf\xe9'))
C('body utf8 request', {"stubs": []}, R('/', 'Content-Type: text/plain; charset=utf-8\r\n', 'POST', 'caf\xc3\xa9'))
C('body binary request', {"stubs": []}, R('/', 'Content-Type: application/octet-stream\r\n', 'POST', '\x00\x01\xff'))
C('query unicode raw', {"stubs": []}, R('/p?q=\xc3\xa9&r=%ZZ&s=%C3%A9'))
C('path dot segments', {"stubs": []}, R('/a/../b/./c//d'))
C('absolute uri', {"stubs": []}, R('http://other:9/abs?x=1'))
C('gzip request', {"stubs": []}, b'POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc')
C('chunked request', {"stubs": []}, R('/', 'Transfer-Encoding: chunked\r\n', 'POST', '3\r\nabc\r\n0\r\n\r\n'))
C('form json ct', {"stubs": []}, R('/', 'Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n', 'POST', 'a=%E2%9C%93&b&=c&d=1=2'))
C('json body recorded', {"stubs": []}, R('/', 'Content-Type: application/json\r\n', 'POST', '{"b":1,"a":[1,2]}'))
C('repeated query order', {"stubs": []}, R('/?b=1&a=2&b=3&A=4'))
C('headers order case', {"stubs": []}, R('/', 'Zeta: 1\r\nalpha: 2\r\nZETA: 3\r\nX-Forwarded-For: 1.2.3.4\r\n'))
C('expect 100', {"stubs": [{"responses": [{"is": {"body": "ok"}}]}]}, R('/', 'Expect: 100-continue\r\n', 'POST', 'abc'))
C('predicate on unicode header', {"stubs": [{"predicates": [{"equals": {"headers": {"x-l": "a\xe9b"}}}], "responses": [{"is": {"body": "hit"}}]}]}, R('/', 'X-L: a\xe9b\r\n'), R('/', 'X-L: a\xc3\xa9b\r\n'), record=False)
C('predicate on latin1 body', {"stubs": [{"predicates": [{"equals": {"body": "caf\xe9"}}], "responses": [{"is": {"body": "hit"}}]}]}, R('/', '', 'POST', 'caf\xe9'), R('/', '', 'POST', 'caf\xc3\xa9'), record=False)
C('header unicode value 404', {"stubs": [{"responses": [{"is": {"statusCode": 404, "headers": {"X-U": "\u2713"}, "body": "x"}}]}]}, R())
C('header unicode value 299', {"stubs": [{"responses": [{"is": {"statusCode": 299, "headers": {"X-U": "\u2713"}, "body": "x"}}]}]}, R())
C('header name invalid', {"stubs": [{"responses": [{"is": {"headers": {"X U": "v"}, "body": "x"}}]}]}, R())
