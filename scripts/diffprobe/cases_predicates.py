# Predicates of every operator on every http field, with options, against one set of requests
# (query keys repeated and empty, headers repeated and in any case, encoded paths, form, JSON
# and XML bodies); each case's stub answers "hit", everything else the default. The "record"
# cases compare what the imposter records of the same requests.
from impcases import case_list, request
CASES, C = case_list()
def R(path='/', hdrs='', method='GET', body=''):
    return request(path, hdrs, method, body, length=bool(body) or method == 'POST')
JSON = '{"a":{"b":[1,2,"Three"]},"n":1.50,"s":"Hello World","arr":[{"k":"v"},{"k":"W"}],"e":null,"t":true}'
XML = '<root xmlns:x="urn:x"><x:item id="1">One</x:item><item>Two</item><n>12</n></root>'
REQS = [
    R('/Path/To?a=1&b=X&a=2&c=&d', 'X-Test: Value\r\nx-test: other\r\n'),
    R('/form', 'Content-Type: application/x-www-form-urlencoded\r\n', 'POST', 'a=1&b=two&b=three&c=%41+b&d'),
    R('/json', 'Content-Type: application/json\r\n', 'POST', JSON),
    R('/xml', 'Content-Type: application/xml\r\n', 'POST', XML),
    R('/enc%20oded/%2Fslash?q=%E2%9C%93&sp=a+b&Q=up', 'Accept: application/json\r\nX-Multi: a\r\nX-Multi: b\r\n'),
    R('/text', 'Content-Type: text/plain\r\n', 'PUT', 'Hello World 42'),
]
VALUES = {
    'method': ['GET', 'get', 'POST', 'P'],
    'path': ['/path/to', '/Path/To', '/enc oded//slash', '/enc%20oded/%2Fslash', '/', '/json', 'to', '/P'],
    'query': [{'a': '1'}, {'a': ['1', '2']}, {'a': ['2', '1']}, {'A': '1'}, {'c': ''}, {'d': ''}, {'b': 'x'},
              {'q': '\u2713'}, {'sp': 'a b'}, {'a': '2'}, {'q': 'up'}, {}, {'zz': ''}],
    'headers': [{'x-test': 'value'}, {'X-TEST': 'Value'}, {'x-test': 'other'}, {'x-multi': 'a'}, {'x-multi': ['a', 'b']},
                {'x-multi': 'a,b'}, {'accept': 'json'}, {'content-type': 'application/json'}, {'host': 'x'}, {}],
    'body': ['Hello', 'Hello World 42', {'s': 'Hello World'}, {'a': {'b': [1]}}, {'a': {'b': [1, 2, 'three']}}, {'n': 1.5},
             {'n': '1.50'}, {'arr': [{'k': 'v'}]}, {'arr': {'k': 'w'}}, 'one', '<root', {'e': None}, {'t': 'true'}, {'t': True},
             {'a': {'b': 2}}, {'a': {}}, '', 42, ['x'], {'arr': [{'k': 'W'}, {'k': 'v'}]}],
    'form': [{'a': '1'}, {'b': 'two'}, {'b': ['two', 'three']}, {'c': 'A b'}, {'d': ''}, {'C': 'a b'}],
}
OPS = ['equals', 'deepEquals', 'contains', 'startsWith', 'endsWith']
for op in OPS:
    for field, values in VALUES.items():
        for v in values:
            C(f'{op} {field} {v!r}', {"stubs": [{"predicates": [{op: {field: v}}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
MATCHES = {'method': ['^G', 'p'], 'path': ['^/p', 'to$', '%20', ' ', '/$'], 'query': [{'a': '\\d'}, {'a': '^2$'}, {'c': '^$'}, {'q': '\u2713'}],
           'headers': [{'x-test': 'val'}, {'x-multi': 'b'}, {'x-multi': '^a$'}], 'body': ['\\d+', '^Hello', {'s': 'world'}, {'a': {'b': 'three'}}, {'n': '^1\\.5$'}],
           'form': [{'b': 'thr'}, {'c': '^a b$'}]}
for field, values in MATCHES.items():
    for v in values:
        C(f'matches {field} {v!r}', {"stubs": [{"predicates": [{"matches": {field: v}}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
EXISTS = {'query': [{'a': True}, {'c': True}, {'d': True}, {'zz': False}, {'c': False}], 'headers': [{'x-test': True}, {'X-MULTI': True}, {'content-type': False}],
          'body': [True, False, {'s': True}, {'e': True}, {'zz': False}, {'a': {'b': True}}], 'form': [{'a': True}, {'d': True}, {'zz': False}],
          'path': [True], 'method': [False]}
for field, values in EXISTS.items():
    for v in values:
        C(f'exists {field} {v!r}', {"stubs": [{"predicates": [{"exists": {field: v}}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
OPTS = [
    ('caseSensitive', {'caseSensitive': True}, [('equals', {'path': '/Path/To'}), ('equals', {'query': {'A': '1'}}), ('equals', {'headers': {'X-Test': 'Value'}}),
                                               ('equals', {'headers': {'x-test': 'Value'}}), ('contains', {'body': {'s': 'hello'}}), ('matches', {'path': '^/P'}), ('deepEquals', {'query': {'a': ['1', '2'], 'b': 'X', 'c': '', 'd': ''}})]),
    ('keyCaseSensitive', {'keyCaseSensitive': True}, [('equals', {'query': {'A': '1'}}), ('equals', {'query': {'a': '1'}}), ('equals', {'headers': {'X-Test': 'value'}}),
                                                     ('equals', {'headers': {'x-test': 'value'}}), ('equals', {'body': {'S': 'hello world'}}), ('exists', {'query': {'Q': True}})]),
    ('except', {'except': '\\d+'}, [('equals', {'body': 'Hello World '}), ('equals', {'path': '/path/to'}), ('equals', {'query': {'a': ''}}), ('contains', {'body': {'n': '.'}})]),
    ('except case', {'except': 'WORLD', 'caseSensitive': True}, [('contains', {'body': 'World'})]),
    ('jsonpath', {'jsonpath': {'selector': '$.a.b[2]'}}, [('equals', {'body': 'three'}), ('equals', {'body': 'Three'}), ('exists', {'body': True}), ('matches', {'body': '^T'})]),
    ('jsonpath all', {'jsonpath': {'selector': '$.arr[*].k'}}, [('equals', {'body': 'w'}), ('equals', {'body': ['v', 'W']}), ('deepEquals', {'body': ['v', 'w']}), ('contains', {'body': 'v'})]),
    ('jsonpath number', {'jsonpath': {'selector': '$.n'}}, [('equals', {'body': 1.5}), ('equals', {'body': '1.5'}), ('deepEquals', {'body': '1.5'})]),
    ('jsonpath missing', {'jsonpath': {'selector': '$.zz'}}, [('equals', {'body': ''}), ('exists', {'body': False})]),
    ('xpath', {'xpath': {'selector': '//item'}}, [('equals', {'body': 'two'}), ('deepEquals', {'body': 'Two'}), ('exists', {'body': True})]),
    ('xpath ns', {'xpath': {'selector': '//x:item', 'ns': {'x': 'urn:x'}}}, [('equals', {'body': 'one'}), ('exists', {'body': True})]),
    ('xpath attr', {'xpath': {'selector': '//x:item/@id', 'ns': {'x': 'urn:x'}}}, [('equals', {'body': '1'})]),
    ('xpath count', {'xpath': {'selector': 'count(//n)'}}, [('equals', {'body': 1}), ('equals', {'body': '1'})]),
    ('xpath no ns', {'xpath': {'selector': '//x:item'}}, [('equals', {'body': 'one'}), ('exists', {'body': False})]),
]
for name, opt, preds in OPTS:
    for op, val in preds:
        p = {op: val}; p.update(opt)
        C(f'{name} {op} {val!r}', {"stubs": [{"predicates": [p], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
# not / or / and / inject
C('not equals', {"stubs": [{"predicates": [{"not": {"equals": {"method": "GET"}}}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
C('or', {"stubs": [{"predicates": [{"or": [{"equals": {"path": "/json"}}, {"contains": {"body": "World"}}]}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
C('and', {"stubs": [{"predicates": [{"and": [{"equals": {"method": "POST"}}, {"exists": {"form": {"a": True}}}]}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
C('inject', {"stubs": [{"predicates": [{"inject": "function (config) { return config.request.query.a === '1' || Array.isArray(config.request.query.a); }"}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS, record=False)
C('inject sees', {"stubs": [{"responses": [{"inject": "function (config) { return { body: JSON.stringify([config.request.query, config.request.headers, config.request.form, config.request.path, typeof config.request.body]) }; }"}]}]}, *REQS, record=False)
# what is recorded
C('record', {"stubs": []}, *REQS)
C('record with stub', {"stubs": [{"predicates": [{"equals": {"method": "POST"}}], "responses": [{"is": {"body": "hit"}}]}]}, *REQS)
