# tcp imposters: text and binary mode, predicates on data, endOfRequestResolver, what is
# recorded (requestFrom, ip and timestamp left out). Each request is one connection; the
# answer is what arrives within readMs.
import base64
from impcases import case_list
CASES, add = case_list(tcp=True)
def C(name, imposter, *requests, **kw):
    add(name, dict(imposter, protocol='tcp'), *requests, **kw)
b64 = lambda s: base64.b64encode(s.encode('latin1')).decode()
C('text echo-less', {"stubs": [{"responses": [{"is": {"data": "pong"}}]}]}, 'ping', 'ünï\n')
C('text no stub', {"stubs": []}, 'hello')
C('binary', {"mode": "binary", "stubs": [{"responses": [{"is": {"data": b64('\x00\x01pong')}}]}]}, '\x00\x01\xff')
C('binary not base64', {"mode": "binary", "stubs": [{"responses": [{"is": {"data": "not base64!"}}]}]}, 'x')
C('text data object', {"stubs": [{"responses": [{"is": {"data": {"a": 1}}}]}]}, 'x')
C('text data number', {"stubs": [{"responses": [{"is": {"data": 42}}]}]}, 'x')
C('text data null', {"stubs": [{"responses": [{"is": {"data": None}}]}]}, 'x')
C('text is empty', {"stubs": [{"responses": [{"is": {}}]}]}, 'x')
for op, v in [('equals', 'ping'), ('equals', 'PING'), ('contains', 'in'), ('startsWith', 'pi'), ('endsWith', 'ng'), ('matches', '^p.n'), ('deepEquals', 'ping'),
              ('exists', True), ('exists', False)]:
    C(f'text {op} {v!r}', {"stubs": [{"predicates": [{op: {"data": v}}], "responses": [{"is": {"data": "hit"}}]}, {"responses": [{"is": {"data": "miss"}}]}]}, 'ping', 'PONG', '')
for op, v in [('equals', b64('ping')), ('contains', b64('in')), ('startsWith', b64('pi')), ('endsWith', b64('ng')), ('matches', 'cGlu'), ('contains', b64('\x01'))]:
    C(f'binary {op} {v!r}', {"mode": "binary", "stubs": [{"predicates": [{op: {"data": v}}], "responses": [{"is": {"data": b64('hit')}}]}, {"responses": [{"is": {"data": b64('miss')}}]}]}, 'ping', '\x00\x01ping\x01')
C('text caseSensitive', {"stubs": [{"predicates": [{"equals": {"data": "PING"}, "caseSensitive": True}], "responses": [{"is": {"data": "hit"}}]}]}, 'ping', 'PING')
C('text except', {"stubs": [{"predicates": [{"equals": {"data": "ping"}, "except": "\\d+"}], "responses": [{"is": {"data": "hit"}}]}]}, 'p1i2ng', 'ping3')
C('text jsonpath', {"stubs": [{"predicates": [{"equals": {"data": "v"}, "jsonpath": {"selector": "$.k"}}], "responses": [{"is": {"data": "hit"}}]}]}, '{"k":"v"}', '{"k":"w"}', 'not json')
C('text xpath', {"stubs": [{"predicates": [{"equals": {"data": "v"}, "xpath": {"selector": "//k"}}], "responses": [{"is": {"data": "hit"}}]}]}, '<r><k>v</k></r>', '<r/>', 'not xml')
C('resolver length', {"endOfRequestResolver": {"inject": "function (requestData) { return requestData.length >= 6; }"}, "stubs": [{"responses": [{"inject": "function (config) { return { data: 'got ' + config.request.data }; }"}]}]},
  'abcdefgh', readMs=800)
C('resolver binary', {"mode": "binary", "endOfRequestResolver": {"inject": "function (requestData) { return requestData.length >= 2; }"}, "stubs": [{"responses": [{"is": {"data": b64('ok')}}]}]}, '\x00\x01\x02')
C('inject response', {"stubs": [{"responses": [{"inject": "function (config) { return { data: JSON.stringify(Object.keys(config.request).sort()) }; }"}]}]}, 'x')
C('behaviors copy', {"stubs": [{"responses": [{"is": {"data": "n=${N}"}, "behaviors": [{"copy": {"from": "data", "into": "${N}", "using": {"method": "regex", "selector": "\\d+"}}}]}]}]}, 'id 42 x')
C('behaviors decorate', {"stubs": [{"responses": [{"is": {"data": "a"}, "behaviors": [{"decorate": "function (config) { config.response.data += config.request.data.length; }"}]}]}]}, 'abc')
C('fault reset', {"stubs": [{"responses": [{"fault": "CONNECTION_RESET_BY_PEER"}]}]}, 'x', record=False)
C('default response', {"defaultResponse": {"data": "dflt"}, "stubs": [{"predicates": [{"equals": {"data": "a"}}], "responses": [{"is": {}}]}]}, 'a', 'b')
C('record binary', {"mode": "binary", "stubs": []}, '\x00\xff\x10abc')
