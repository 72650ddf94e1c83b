import json, copy
CASES = []
def C(name, method, path, body=None, headers=None, **kw):
    CASES.append(dict(name=name, method=method, path=path, body=body, headers=headers, **kw))

J = {'Content-Type': 'application/json'}
endpoints = ['/', '/imposters', '/imposters/25610', '/imposters/25699', '/imposters/25610/stubs', '/imposters/25610/stubs/0',
             '/imposters/25610/stubs/5', '/imposters/25610/requests', '/imposters/25610/savedProxyResponses',
             '/imposters/25610/savedRequests', '/config', '/logs', '/imposters/abc', '/imposters/25610/stubs/x', '/imposters/25610/foo']
for ep in endpoints:
    for m in ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']:
        C(f'method {m} {ep}', m, ep, body=None if m in ('GET','DELETE','HEAD','OPTIONS') else '{}', headers=J if m not in ('GET','DELETE','HEAD','OPTIONS') else None)
# bodies not JSON, content types
good_imp = {"port": 25620, "protocol": "http"}
for ep, m, good in [('/imposters','POST',good_imp), ('/imposters','PUT',{"imposters":[good_imp]}),
                    ('/imposters/25610/stubs','POST',{"stub":{"responses":[{"is":{}}]}}),
                    ('/imposters/25610/stubs','PUT',{"stubs":[{"responses":[{"is":{}}]}]}),
                    ('/imposters/25610/stubs/0','PUT',{"responses":[{"is":{}}]})]:
    for ct in [None, 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/xml', 'multipart/form-data']:
        h = {} if ct is None else {'Content-Type': ct}
        C(f'ct {ct} {m} {ep}', m, ep, body=json.dumps(good), headers=h)
    for raw in ['', ' ', 'null', 'true', '1', '"str"', '[]', '[1]', '{', '{"a":1}x', 'port=25620', '\xff\xfe', '{"port":25620,"protocol":"http",}', '{}']:
        C(f'raw {raw!r} {m} {ep}', m, ep, body=raw, headers=J)
# wrong types at every level of an imposter
vals = [None, True, 1, -1, 1.5, "s", "", [], [1], {}, {"a": 1}]
fields = ['port','protocol','name','recordRequests','numberOfRequests','requests','defaultResponse','allowCORS','stubs','endOfRequestResolver','mode','key','cert','mutualAuth','ciphers','host']
for f in fields:
    for v in vals:
        imp = {"port": 25620, "protocol": "http"}
        imp[f] = v
        C(f'imp.{f}={json.dumps(v)}', 'POST', '/imposters', body=imp)
def stubimp(stub):
    return {"port": 25620, "protocol": "http", "stubs": [stub]}
for v in vals:
    C(f'stubs[0]={json.dumps(v)}', 'POST', '/imposters', body={"port":25620,"protocol":"http","stubs":[v]})
    C(f'stub.predicates={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates": v, "responses":[{"is":{}}]}))
    C(f'stub.predicates[0]={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates": [v], "responses":[{"is":{}}]}))
    C(f'stub.responses={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses": v}))
    C(f'stub.responses[0]={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses": [v]}))
    C(f'pred.equals={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": v}], "responses":[{"is":{}}]}))
    C(f'pred.equals.path={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"path": v}}], "responses":[{"is":{}}]}))
    C(f'pred.equals.headers={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"headers": v}}], "responses":[{"is":{}}]}))
    C(f'pred.caseSensitive={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"path":"/"}, "caseSensitive": v}], "responses":[{"is":{}}]}))
    C(f'pred.except={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"path":"/"}, "except": v}], "responses":[{"is":{}}]}))
    C(f'pred.jsonpath={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"body":"x"}, "jsonpath": v}], "responses":[{"is":{}}]}))
    C(f'pred.xpath={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"equals": {"body":"x"}, "xpath": v}], "responses":[{"is":{}}]}))
    C(f'pred.and={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"and": v}], "responses":[{"is":{}}]}))
    C(f'pred.not={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"not": v}], "responses":[{"is":{}}]}))
    C(f'pred.matches.path={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"matches": {"path": v}}], "responses":[{"is":{}}]}))
    C(f'pred.exists.path={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"predicates":[{"exists": {"path": v}}], "responses":[{"is":{}}]}))
    C(f'resp.is={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is": v}]}))
    C(f'resp.is.statusCode={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is": {"statusCode": v}}]}))
    C(f'resp.is.headers={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is": {"headers": v}}]}))
    C(f'resp.is.body={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is": {"body": v}}]}))
    C(f'resp.is._mode={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is": {"_mode": v}}]}))
    C(f'resp.proxy={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"proxy": v}]}))
    C(f'resp.proxy.to={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"proxy": {"to": v}}]}))
    C(f'resp.proxy.mode={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"proxy": {"to": "http://127.0.0.1:1", "mode": v}}]}))
    C(f'resp.proxy.predicateGenerators={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"proxy": {"to": "http://127.0.0.1:1", "predicateGenerators": v}}]}))
    C(f'resp.fault={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"fault": v}]}))
    C(f'resp.inject={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"inject": v}]}))
    C(f'resp.repeat={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "repeat": v}]}))
    C(f'resp.behaviors={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": v}]}))
    C(f'resp._behaviors={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "_behaviors": v}]}))
    C(f'resp.behaviors[0]={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [v]}]}))
    for b in ['wait','copy','lookup','decorate','shellTransform','repeat']:
        C(f'beh.{b}={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{b: v}]}]}))
    C(f'copy.from={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"copy": {"from": v, "into": "X", "using": {"method":"regex","selector":"."}}}]}]}))
    C(f'copy.into={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"copy": {"from": "path", "into": v, "using": {"method":"regex","selector":"."}}}]}]}))
    C(f'copy.using={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"copy": {"from": "path", "into": "X", "using": v}}]}]}))
    C(f'copy.using.method={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"copy": {"from": "path", "into": "X", "using": {"method": v, "selector":"."}}}]}]}))
    C(f'copy.using.selector={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"copy": {"from": "path", "into": "X", "using": {"method": "regex", "selector": v}}}]}]}))
    C(f'lookup.key={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"lookup": {"key": v, "fromDataSource": {"csv": {"path": "x.csv", "keyColumn": "a"}}, "into": "X"}}]}]}))
    C(f'lookup.fromDataSource={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"lookup": {"key": {"from":"path","using":{"method":"regex","selector":"."}}, "fromDataSource": v, "into": "X"}}]}]}))
    C(f'lookup.csv={json.dumps(v)}', 'POST', '/imposters', body=stubimp({"responses":[{"is":{}, "behaviors": [{"lookup": {"key": {"from":"path","using":{"method":"regex","selector":"."}}, "fromDataSource": {"csv": v}, "into": "X"}}]}]}))
# queries
for q in ['replayable=true','replayable=false','replayable=1','replayable=TRUE','replayable=','replayable','removeProxies=true','removeProxies=yes','removeProxies=','foo=bar','replayable=true&replayable=false','replayable=false&replayable=true']:
    for ep in ['/imposters', '/imposters/25610']:
        C(f'query GET {ep}?{q}', 'GET', f'{ep}?{q}')
        C(f'query DELETE {ep}?{q}', 'DELETE', f'{ep}?{q}')
# PUT mixed
C('put mixed valid+invalid', 'PUT', '/imposters', body={"imposters":[{"port":25620,"protocol":"http"},{"port":25621,"protocol":"nope"}]})
C('put mixed valid+badstub', 'PUT', '/imposters', body={"imposters":[{"port":25620,"protocol":"http"},{"port":25621,"protocol":"http","stubs":[{"responses":[{"is":{},"repeat":0}]}]}]})
C('put dup ports', 'PUT', '/imposters', body={"imposters":[{"port":25620,"protocol":"http"},{"port":25620,"protocol":"http"}]})
C('put imposters null elem', 'PUT', '/imposters', body={"imposters":[None]})
C('put imposters num elem', 'PUT', '/imposters', body={"imposters":[1]})
C('put imposters str elem', 'PUT', '/imposters', body={"imposters":["x"]})
C('put no imposters key', 'PUT', '/imposters', body={})
C('put imposters null', 'PUT', '/imposters', body={"imposters": None})
C('put auto port', 'PUT', '/imposters', body={"imposters":[{"protocol":"http"}]})
C('put keeps base port', 'PUT', '/imposters', body={"imposters":[{"port":25610,"protocol":"tcp"}]})
for p in [0, -1, 65535, 65536, 70000, "25620", "abc", "", 1.5, 25610, 80, 1, "25620x", " 25620", 2.5e4, 1e10]:
    C(f'port {json.dumps(p)}', 'POST', '/imposters', body={"port": p, "protocol": "http"})
for p in ['0', '-1', '65536', '99999999999999999999', '25610.0', '0x6402', '%32%35%36%31%30', '25610%20', '025610', '+25610']:
    C(f'path port {p}', 'GET', f'/imposters/{p}')
    C(f'path port DELETE {p}', 'DELETE', f'/imposters/{p}')
# stub index
for i in ['0','1','2','-1','abc','1.5','01','1e0','','%30',' 0','999999999999999999999']:
    C(f'stub DELETE idx {i!r}', 'DELETE', f'/imposters/25610/stubs/{i}')
    C(f'stub PUT idx {i!r}', 'PUT', f'/imposters/25610/stubs/{i}', body={"responses":[{"is":{"body":"N"}}]})
for i in [0, 1, 2, 3, -1, "1", "x", 1.5, None, True, 99]:
    C(f'stub POST index {json.dumps(i)}', 'POST', '/imposters/25610/stubs', body={"index": i, "stub": {"responses":[{"is":{"body":"N"}}]}})
C('stub POST no stub', 'POST', '/imposters/25610/stubs', body={"index": 0})
C('stub POST stub null', 'POST', '/imposters/25610/stubs', body={"stub": None})
C('stub POST stub array', 'POST', '/imposters/25610/stubs', body={"stub": []})
C('stub POST bare stub', 'POST', '/imposters/25610/stubs', body={"responses":[{"is":{}}]})
C('stubs PUT null', 'PUT', '/imposters/25610/stubs', body={"stubs": None})
C('stubs PUT obj', 'PUT', '/imposters/25610/stubs', body={"stubs": {}})
C('stubs PUT missing', 'PUT', '/imposters/25610/stubs', body={})
C('stubs PUT bare array', 'PUT', '/imposters/25610/stubs', body=[{"responses":[{"is":{}}]}])
C('stubs PUT elem null', 'PUT', '/imposters/25610/stubs', body={"stubs":[None]})
C('stubs PUT missing imp', 'PUT', '/imposters/25699/stubs', body={"stubs":[]})
C('stub POST missing imp', 'POST', '/imposters/25699/stubs', body={"stub":{"responses":[{"is":{}}]}})
C('stub PUT missing imp', 'PUT', '/imposters/25699/stubs/0', body={"responses":[{"is":{}}]})
C('stub DELETE missing imp', 'DELETE', '/imposters/25699/stubs/0')
