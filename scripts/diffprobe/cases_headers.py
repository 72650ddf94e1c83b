from impcases import case_list, request
CASES, C = case_list()
G = request
ok = {"stubs": [{"responses": [{"is": {"body": "ok"}}]}]}
# recorded headers
C('rep headers', ok, G(hdrs='X-A: 1\r\nX-A: 2\r\nx-a: 3\r\n'))
C('rep cookie', ok, G(hdrs='Cookie: a=1\r\nCookie: b=2\r\n'))
C('rep set-cookie req', ok, G(hdrs='Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n'))
C('rep content-type', ok, G(hdrs='Content-Type: a/b\r\nContent-Type: c/d\r\n'))
C('rep host-like', ok, G(hdrs='User-Agent: a\r\nUser-Agent: b\r\n'))
C('rep accept', ok, G(hdrs='Accept: a\r\nAccept: b\r\n'))
C('rep from', ok, G(hdrs='From: a\r\nFrom: b\r\n'))
C('rep authorization', ok, G(hdrs='Authorization: a\r\nAuthorization: b\r\n'))
C('rep referer', ok, G(hdrs='Referer: a\r\nReferer: b\r\n'))
C('rep empty values', ok, G(hdrs='X-E:\r\nX-E: \r\nX-F:\r\n'))
C('header case', ok, G(hdrs='x-lower: 1\r\nX-UPPER: 2\r\nX-MiXeD: 3\r\n'))
C('header ws', ok, G(hdrs='X-Sp:   a  b   \r\nX-Tab:\ta\t\r\n'))
# predicates on repeated headers
def pimp(pred):
    return {"stubs": [{"predicates": [pred], "responses": [{"is": {"body": "match"}}]}, {"responses": [{"is": {"statusCode": 404, "body": "no"}}]}]}
for pred in [{"deepEquals": {"headers": {"X-A": "1,2"}}}, {"deepEquals": {"headers": {"x-a": ["1", "2"]}}},
             {"equals": {"headers": {"X-A": "1"}}}, {"equals": {"headers": {"X-A": "1, 2"}}}, {"equals": {"headers": {"X-A": "1,2"}}},
             {"equals": {"headers": {"X-A": ["1", "2"]}}}, {"contains": {"headers": {"X-A": "2"}}}, {"matches": {"headers": {"X-A": "^1,2$"}}},
             {"deepEquals": {"headers": {"X-A": "1,2", "Host": "x", "Connection": "close"}}},
             {"exists": {"headers": {"X-A": True}}}, {"deepEquals": {"headers": {"x-a": "1,2", "host": "x", "connection": "close"}}}]:
    C(f'pred rep {pred}', pimp(pred), G(hdrs='X-A: 1\r\nX-A: 2\r\n'), record=False)
# query strings
for q in ['a=1&a=2', 'a=&b', 'a', 'a=1&a=', '%61=%62', 'a=%20b+c', 'a[]=1&a[]=2', 'a=1&A=2', 'a=%zz', 'a=1&&b=2', '=x', 'a=b=c', 'a.b=1', 'a[b]=1', 'a=%E2%82%AC', 'a=%C3', 'x=1;y=2']:
    C(f'query {q}', ok, G(path='/p?' + q))
for pred in [{"equals": {"query": {"a": ["1", "2"]}}}, {"deepEquals": {"query": {"a": ["1", "2"]}}}, {"deepEquals": {"query": {"a": ["2", "1"]}}},
             {"equals": {"query": {"a": "1"}}}, {"deepEquals": {"query": {"a": "1"}}}, {"equals": {"query": {"b": ""}}}, {"exists": {"query": {"b": True}}},
             {"deepEquals": {"query": {"a": ["1", "2"], "b": ""}}}, {"equals": {"query": {"c": " d"}}}, {"equals": {"query": {"c": "+d"}}}]:
    C(f'pred query {pred}', pimp(pred), G(path='/p?a=1&a=2&b=&c=+d'), record=False)
# is responses: header case and repeated
C('is header case', {"stubs": [{"responses": [{"is": {"headers": {"x-lower": "a", "X-UPPER": "b", "X-MiXeD": "c"}, "body": "x"}}]}]}, G())
C('is header array', {"stubs": [{"responses": [{"is": {"headers": {"X-Arr": ["a", "b"], "Set-Cookie": ["a=1", "b=2"]}, "body": "x"}}]}]}, G())
C('is header empty', {"stubs": [{"responses": [{"is": {"headers": {"X-E": ""}, "body": "x"}}]}]}, G())
C('is content-length given', {"stubs": [{"responses": [{"is": {"headers": {"Content-Length": "2"}, "body": "xy"}}]}]}, G())
C('is te chunked given', {"stubs": [{"responses": [{"is": {"headers": {"Transfer-Encoding": "chunked"}, "body": "xy"}}]}]}, G())
C('is connection keep-alive', {"stubs": [{"responses": [{"is": {"headers": {"Connection": "keep-alive"}, "body": "xy"}}]}]}, G())
C('is connection close', {"stubs": [{"responses": [{"is": {"headers": {"Connection": "close"}, "body": "xy"}}]}]}, G())
C('is head', ok, G(method='HEAD'))
C('is 204 body', {"stubs": [{"responses": [{"is": {"statusCode": 204, "body": "xy"}}]}]}, G())
C('is 304 body', {"stubs": [{"responses": [{"is": {"statusCode": 304, "body": "xy"}}]}]}, G())
C('is binary', {"stubs": [{"responses": [{"is": {"_mode": "binary", "body": "AAECAwQ="}}]}]}, G())
C('is binary headers', {"stubs": [{"responses": [{"is": {"_mode": "binary", "body": "AAEC", "headers": {"Content-Type": "application/octet-stream"}}}]}]}, G())
# defaultResponse
C('default headers', {"defaultResponse": {"statusCode": 202, "headers": {"X-Def": "d", "x-two": "2"}, "body": "def"}, "stubs": [{"responses": [{"is": {"body": "x", "headers": {"X-Own": "o"}}}]}]}, G())
C('default headers merge', {"defaultResponse": {"statusCode": 202, "headers": {"X-Def": "d", "X-Own": "fromdef"}, "body": "def"}, "stubs": [{"responses": [{"is": {"headers": {"x-own": "o"}}}]}]}, G())
C('default no match', {"defaultResponse": {"statusCode": 418, "headers": {"X-Def": "d"}, "body": "def"}, "stubs": [{"predicates": [{"equals": {"path": "/z"}}], "responses": [{"is": {"body": "x"}}]}]}, G())
C('default binary', {"defaultResponse": {"_mode": "binary", "body": "AAEC"}, "stubs": []}, G())
C('default empty headers', {"defaultResponse": {"headers": {}}, "stubs": [{"responses": [{"is": {"headers": {"X-A": "1"}}}]}]}, G())
C('default connection', {"defaultResponse": {"headers": {"Connection": "keep-alive"}}, "stubs": []}, G())
# request bodies
C('post binary', ok, G(method='POST', hdrs='Content-Type: application/octet-stream\r\n', body='\x00\x01\xff'))
C('post latin1', ok, G(method='POST', hdrs='Content-Type: text/plain\r\n', body='caf\xe9'))
C('post chunked', ok, 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n')
C('post form', ok, G(method='POST', hdrs='Content-Type: application/x-www-form-urlencoded\r\n', body='a=1&a=2&b=%20'))
C('binary mode imposter body', {"stubs": [{"responses": [{"is": {"body": "x"}}]}]}, G(method='POST', hdrs='Content-Type: image/png\r\n', body='\x89PNG\x00'))
C('path encoded', ok, G(path='/a%20b/%2F/%zz'))
C('path dots', ok, G(path='/a/../b/./c'))
C('abs uri', ok, 'GET http://h:1/p?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
