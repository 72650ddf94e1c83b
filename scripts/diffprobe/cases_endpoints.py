import json
CASES = []
def C(name, method, path, body=None, headers=None, **kw):
    CASES.append(dict(name=name, method=method, path=path, body=body, headers=headers, **kw))
stubs = {
 'preds true': {"predicates": True, "responses": [{"is": {}}]},
 'preds obj': {"predicates": {}, "responses": [{"is": {}}]},
 'preds ""': {"predicates": "", "responses": [{"is": {}}]},
 'pg obj': {"responses": [{"proxy": {"to": "http://127.0.0.1:1", "predicateGenerators": {}}}]},
 'proxy true': {"responses": [{"proxy": True}]},
 'proxy []': {"responses": [{"proxy": []}]},
 'resp "s"': {"responses": [{"is": {}}, "s"]},
 'resp 1': {"responses": [1]},
 'beh ""': {"responses": [{"is": {}, "behaviors": ""}]},
 'pred ""': {"predicates": [""], "responses": [{"is": {}}]},
 'ns "s"': {"predicates": [{"equals": {"body": "x"}, "xpath": {"selector": "//a", "ns": "s"}}], "responses": [{"is": {}}]},
}
for n, st in stubs.items():
    C(f'PUT imposters {n}', 'PUT', '/imposters', body={"imposters": [{"protocol": "http", "port": 25620, "stubs": [st]}]})
    C(f'PUT imposters second {n}', 'PUT', '/imposters', body={"imposters": [{"protocol": "http", "port": 25621}, {"protocol": "http", "port": 25620, "stubs": [{"responses": [{"is": {}}]}, st]}]})
    C(f'POST stubs {n}', 'POST', '/imposters/25610/stubs', body={"stub": st})
    C(f'POST stubs idx {n}', 'POST', '/imposters/25610/stubs', body={"index": 1, "stub": st})
    C(f'PUT stubs {n}', 'PUT', '/imposters/25610/stubs', body={"stubs": [{"responses": [{"is": {}}]}, st]})
    C(f'PUT stub 0 {n}', 'PUT', '/imposters/25610/stubs/0', body=st)
    C(f'tcp POST {n}', 'POST', '/imposters', body={"protocol": "tcp", "port": 25620, "stubs": [st]}, base=False)
C('PUT imposters stubs ""', 'PUT', '/imposters', body={"imposters": [{"protocol": "http", "port": 25620, "stubs": ""}]})
C('PUT imposters protocol null', 'PUT', '/imposters', body={"imposters": [{"protocol": None, "port": 25620}]})
C('PUT stubs ""', 'PUT', '/imposters/25610/stubs', body={"stubs": ""})
C('PUT stubs 0', 'PUT', '/imposters/25610/stubs', body={"stubs": 0})
