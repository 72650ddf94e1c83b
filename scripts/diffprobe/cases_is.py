# `is` responses of every body and header type, statusCode forms, _mode binary, and how the
# imposter's defaultResponse merges into them.
from impcases import case_list, request
CASES, C = case_list(default_requests=(request(),))
G = request
BODIES = ['text', '', {'a': 1, 'b': [1, 'x', None], 'c': {'d': True}}, [1, 2, {'x': 'y'}], [], {}, 0, 42, 1.5, -0.0, 1e21,
          None, True, False, 'ünïcode ✓', '{"already":"json"}', 'line1\nline2', '\u0000nul']
for b in BODIES:
    C(f'body {b!r}', {"stubs": [{"responses": [{"is": {"body": b}}]}]}, record=False)
    C(f'body {b!r} with content-type', {"stubs": [{"responses": [{"is": {"headers": {"Content-Type": "application/json"}, "body": b}}]}]}, record=False)
HEADERS = [{'X-A': 'b'}, {'X-A': ['1', '2']}, {'X-A': 1}, {'X-A': True}, {'X-A': None}, {'X-A': {'o': 1}}, {'X-A': []}, {'X-A': [1, None]},
           {'x-lower': 'l', 'X-UPPER': 'u', 'Mixed-Case': 'm'}, {'Set-Cookie': ['a=1', 'b=2']}, {'Content-Type': ['text/plain', 'text/html']},
           {'Content-Length': '3'}, {'Content-Length': 99}, {'Transfer-Encoding': 'chunked'}, {'Connection': 'close'}, {'Date': 'yesterday'},
           {'Location': '/x', 'X-Z': 'z', 'X-A': 'a'}, {'X-Empty': ''}, {'Content-Encoding': 'gzip'}, {'Server': 'mine'}]
for h in HEADERS:
    C(f'headers {h!r}', {"stubs": [{"responses": [{"is": {"headers": h, "body": "abc"}}]}]}, record=False)
for sc in [201, '201', '404', 'abc', 99, 600, 204, 304, '', None, 200.0, '2e2', ' 202']:
    C(f'statusCode {sc!r}', {"stubs": [{"responses": [{"is": {"statusCode": sc, "body": "abc"}}]}]}, record=False)
for body in ['aGVsbG8=', 'not base64!', '', 'AAEC/w==']:
    C(f'binary {body!r}', {"stubs": [{"responses": [{"is": {"_mode": "binary", "body": body}}]}]}, record=False)
    C(f'binary {body!r} typed', {"stubs": [{"responses": [{"is": {"_mode": "binary", "headers": {"Content-Type": "image/png"}, "body": body}}]}]}, record=False)
C('binary json body', {"stubs": [{"responses": [{"is": {"_mode": "binary", "body": {"a": 1}}}]}]}, record=False)
C('mode text', {"stubs": [{"responses": [{"is": {"_mode": "text", "body": "aGVsbG8="}}]}]}, record=False)
DEFAULTS = [{'statusCode': 201}, {'headers': {'X-D': 'd', 'X-A': 'da'}}, {'body': 'dflt'}, {'body': {'j': 1}}, {'statusCode': '202', 'headers': {'X-D': ['1', '2']}, 'body': 'dd'},
            {'headers': {'Content-Type': 'text/xml'}}, {'_mode': 'binary', 'body': 'aGk='}]
for d in DEFAULTS:
    for is_ in [{}, {'body': 'mine'}, {'headers': {'X-A': 'mine'}}, {'statusCode': 404}, {'headers': {}}, {'body': None}, {'body': ''}]:
        C(f'default {d!r} is {is_!r}', {"defaultResponse": d, "stubs": [{"predicates": [{"equals": {"path": "/s"}}], "responses": [{"is": is_}]}]}, G('/s'), G('/none'), record=False)
C('allowCORS preflight', {"allowCORS": True, "stubs": [{"responses": [{"is": {"body": "x"}}]}]},
  G('/', 'Origin: http://a\r\nAccess-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: X-Y\r\n', 'OPTIONS'), G('/', 'Origin: http://a\r\n'), record=False)
C('HEAD', {"stubs": [{"responses": [{"is": {"body": "abc", "headers": {"X-A": "1"}}}]}]}, G('/', '', 'HEAD'), record=False)
