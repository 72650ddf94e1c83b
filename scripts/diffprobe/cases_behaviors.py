# Needs --allowInjection (the default). FILES are written to the working directory first.
FILES = {
    'people.csv': 'id,name,city\n1,ann,paris\n2,bob,"new york"\n',
    'shell.js': """const r = JSON.parse(process.env.MB_RESPONSE); const q = JSON.parse(process.env.MB_REQUEST);
r.body = r.body + '|shell:' + q.path; r.headers = r.headers || {}; r.headers['X-Shell'] = 'yes';
console.log(JSON.stringify(r));
""",
}
from impcases import case_list, request
CASES, C = case_list()
G = request
copy = {"copy": {"from": "path", "into": "${P}", "using": {"method": "regex", "selector": "\\d+"}}}
lookup = {"lookup": {"key": {"from": "path", "using": {"method": "regex", "selector": "\\d+"}}, "fromDataSource": {"csv": {"path": "people.csv", "keyColumn": "id"}}, "into": "${row}"}}
decorate = {"decorate": "(config) => { config.response.body += '|dec:' + config.response.body.length; config.response.headers['X-Dec'] = 'd'; }"}
shell = {"shellTransform": "node shell.js"}
wait = {"wait": 10}
is_ = {"statusCode": 200, "headers": {"X-P": "${P}", "X-Name": "${row}[name]"}, "body": "id=${P} name=${row}[name] city=${row}[city]"}
import itertools
for order in [[copy, lookup, decorate, shell, wait], [wait, shell, decorate, lookup, copy], [decorate, copy, lookup], [shell, copy], [lookup, decorate, copy]]:
    name = '+'.join(list(b.keys())[0] for b in order)
    C('beh ' + name, {"stubs": [{"responses": [{"is": is_, "behaviors": order}]}]}, G('/u/2'), G('/u/9'))
# several keys in one behavior object
C('beh one object copy+decorate', {"stubs": [{"responses": [{"is": is_, "behaviors": [dict(**decorate, **copy)]}]}]}, G('/u/1'))
C('beh one object all', {"stubs": [{"responses": [{"is": is_, "behaviors": [dict(**shell, **decorate, **lookup, **copy, **wait)]}]}]}, G('/u/1'))
# old _behaviors object with all
C('old _behaviors all', {"stubs": [{"responses": [{"is": is_, "_behaviors": {"decorate": decorate["decorate"], "shellTransform": ["node shell.js"], "copy": [copy["copy"]], "lookup": [lookup["lookup"]], "wait": 5}}]}]}, G('/u/1'))
# repeat with behaviors
C('repeat+copy', {"stubs": [{"responses": [{"is": {"body": "a${P}"}, "repeat": 2, "behaviors": [copy]}, {"is": {"body": "b"}}]}]}, G('/u/1'), G('/u/2'), G('/u/3'), G('/u/4'))
C('repeat+decorate state', {"stubs": [{"responses": [{"is": {"body": "a"}, "repeat": 2, "behaviors": [{"decorate": "(c) => { c.state.n = (c.state.n||0)+1; c.response.body += c.state.n; }"}]}, {"is": {"body": "b"}}]}]}, G('/'), G('/'), G('/'), G('/'))
C('repeat in behaviors', {"stubs": [{"responses": [{"is": {"body": "a"}, "behaviors": [{"repeat": 2}]}, {"is": {"body": "b"}}]}]}, G('/'), G('/'), G('/'))
C('repeat in behaviors and response', {"stubs": [{"responses": [{"is": {"body": "a"}, "repeat": 3, "behaviors": [{"repeat": 2}]}, {"is": {"body": "b"}}]}]}, G('/'), G('/'), G('/'), G('/'))
C('repeat str', {"stubs": [{"responses": [{"is": {"body": "a"}, "repeat": "2"}, {"is": {"body": "b"}}]}]}, G('/'), G('/'), G('/'))
# copy into headers / statusCode
C('copy into status', {"stubs": [{"responses": [{"is": {"statusCode": "${S}", "body": "x"}, "behaviors": [{"copy": {"from": "query", "into": "${S}", "using": {"method": "regex", "selector": "\\d+"}}}]}]}]}, G('/?s=201'))
C('copy from header', {"stubs": [{"responses": [{"is": {"body": "h=${H}"}, "behaviors": [{"copy": {"from": {"headers": "X-In"}, "into": "${H}", "using": {"method": "regex", "selector": ".+"}}}]}]}]}, G('/', hdrs='X-In: a\r\nX-In: b\r\n'))
C('copy from query rep', {"stubs": [{"responses": [{"is": {"body": "q=${Q}"}, "behaviors": [{"copy": {"from": {"query": "a"}, "into": "${Q}", "using": {"method": "regex", "selector": ".+"}}}]}]}]}, G('/?a=1&a=2'))
C('copy jsonpath body', {"stubs": [{"responses": [{"is": {"body": "v=${V}"}, "behaviors": [{"copy": {"from": "body", "into": "${V}", "using": {"method": "jsonpath", "selector": "$.a[*]"}}}]}]}]}, G('/', method='POST', body='{"a":[1,2]}'))
C('lookup then decorate uses row', {"stubs": [{"responses": [{"is": {"body": "${row}[city]"}, "behaviors": [lookup, {"decorate": "(c) => { c.response.body = c.response.body.toUpperCase(); }"}]}]}]}, G('/u/2'))
C('decorate then copy token made by decorate', {"stubs": [{"responses": [{"is": {"body": "x"}, "behaviors": [{"decorate": "(c) => { c.response.body = 'tok=${P}'; }"}, copy]}]}]}, G('/u/5'))
C('wait fn + copy', {"stubs": [{"responses": [{"is": {"body": "${P}"}, "behaviors": [{"wait": "() => 5"}, copy]}]}]}, G('/u/5'))
C('proxy-less inject + copy', {"stubs": [{"responses": [{"inject": "(c) => ({ body: 'inj ${P}' })", "behaviors": [copy]}]}]}, G('/u/7'))
C('fault + behaviors', {"stubs": [{"responses": [{"fault": "CONNECTION_RESET_BY_PEER", "behaviors": [decorate]}]}]}, G('/u/7'), record=False)
C('binary body + copy', {"stubs": [{"responses": [{"is": {"_mode": "binary", "body": "JHtQfQ=="}, "behaviors": [copy]}]}]}, G('/u/7'))
C('json body + copy', {"stubs": [{"responses": [{"is": {"body": {"id": "${P}", "n": 1}}, "behaviors": [copy]}]}]}, G('/u/7'))
C('json body + decorate', {"stubs": [{"responses": [{"is": {"body": {"id": 1}}, "behaviors": [{"decorate": "(c) => { c.response.body.id = typeof c.response.body; }"}]}]}]}, G('/u/7'))
C('json body + shell', {"stubs": [{"responses": [{"is": {"body": {"id": 1}}, "behaviors": [shell]}]}]}, G('/u/7'))
