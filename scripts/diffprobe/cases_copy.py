# copy from every request field with regex, xpath and jsonpath, matching, matching several
# times and not matching; lookup with keys from those fields; wait as a function. Needs
# --allowInjection (the default). FILES are written to the working directory first.
FILES = {'people.csv': 'id,name,city\n1,ann,paris\n2,bob,"new york"\nX,xena,"a,b"\n'}
from impcases import case_list, request
CASES, C = case_list()
R = request
REQS = [R('/u/12/v/34?id=7&id=8&name=Ann&e=', 'X-Id: 55\r\nx-id: 66\r\nX-Name: bob\r\n'),
        R('/json', 'Content-Type: application/json\r\n', 'POST', '{"id":2,"list":[{"n":"a"},{"n":"b"}],"s":"str","o":{"k":1}}'),
        R('/xml', 'Content-Type: application/xml\r\n', 'POST', '<r xmlns:p="urn:p"><p:id>1</p:id><id>X</id><id>2</id></r>'),
        R('/form', 'Content-Type: application/x-www-form-urlencoded\r\n', 'POST', 'id=2&id=3&name=b+c'),
        R('/none')]
FROMS = ['path', 'method', 'body', 'requestFrom', {'query': 'id'}, {'query': 'name'}, {'query': 'e'}, {'query': 'missing'}, {'headers': 'x-id'},
         {'headers': 'X-NAME'}, {'form': 'id'}, 'query', 'headers', {'body': 'id'}]
USING = [{'method': 'regex', 'selector': '\\d+'}, {'method': 'regex', 'selector': '^.'}, {'method': 'regex', 'selector': 'zzz'},
         {'method': 'regex', 'selector': '(\\d)(\\d)'}, {'method': 'regex', 'selector': '[a-z]+', 'options': {'ignoreCase': True}},
         {'method': 'jsonpath', 'selector': '$.id'}, {'method': 'jsonpath', 'selector': '$.list[*].n'}, {'method': 'jsonpath', 'selector': '$.o'},
         {'method': 'jsonpath', 'selector': '$.zz'}, {'method': 'xpath', 'selector': '//id'}, {'method': 'xpath', 'selector': '//p:id', 'ns': {'p': 'urn:p'}},
         {'method': 'xpath', 'selector': 'count(//id)'}]
for f in FROMS:
    for u in USING:
        C(f'copy from {f!r} using {u!r}', {"stubs": [{"responses": [{"is": {"headers": {"X-Got": "${T}"}, "body": "[${T}] ${T}[0] ${T}[1]"},
           "behaviors": [{"copy": {"from": f, "into": "${T}", "using": u}}]}]}]}, *REQS, record=False)
for f in ['path', {'query': 'id'}, {'headers': 'x-id'}, 'body', {'form': 'id'}]:
    for u in [{'method': 'regex', 'selector': '\\d'}, {'method': 'jsonpath', 'selector': '$.id'}, {'method': 'xpath', 'selector': '//id'}]:
        C(f'lookup key {f!r} {u!r}', {"stubs": [{"responses": [{"is": {"body": "${r}[name] in ${r}[city] ${r}[zz] ${r}"},
           "behaviors": [{"lookup": {"key": {"from": f, "using": u}, "fromDataSource": {"csv": {"path": "people.csv", "keyColumn": "id"}}, "into": "${r}"}}]}]}]}, *REQS, record=False)
C('lookup key index', {"stubs": [{"responses": [{"is": {"body": "${r}[name]"}, "behaviors": [{"lookup": {"key": {"from": "path", "using": {"method": "regex", "selector": "\\d+"}, "index": 1},
   "fromDataSource": {"csv": {"path": "people.csv", "keyColumn": "id"}}, "into": "${r}"}}]}]}]}, *REQS, record=False)
C('lookup delimiter', {"stubs": [{"responses": [{"is": {"body": "${r}[name]"}, "behaviors": [{"lookup": {"key": {"from": "path", "using": {"method": "regex", "selector": "X"}},
   "fromDataSource": {"csv": {"path": "people.csv", "keyColumn": "id", "delimiter": ","}}, "into": "${r}"}}]}]}]}, R('/X'), record=False)
for w in ['function () { return 5; }', 'function () { return "5"; }', 'function () { return -1; }', 'function () { return null; }', 'function () { throw new Error("w"); }', '() => 1']:
    C(f'wait fn {w!r}', {"stubs": [{"responses": [{"is": {"body": "w"}, "behaviors": [{"wait": w}]}]}]}, R('/'), record=False)
