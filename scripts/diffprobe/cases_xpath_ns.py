import json
CASES = []
def C(name, method, path, body=None, headers=None, **kw):
    CASES.append(dict(name=name, method=method, path=path, body=body, headers=headers, **kw))
for ns in ["s", "", True, 1, [], [1], ["A"], [None], {"a": 1}, {"a": "X"}, {"a": None}, {}, "AB"]:
    for cs in [None, True]:
        pred = {"equals": {"body": "x"}, "xpath": {"selector": "//a", "ns": ns}}
        if cs is not None: pred["caseSensitive"] = cs
        C(f'xpath ns={json.dumps(ns)} cs={cs}', 'POST', '/imposters', body={"protocol": "http", "port": 25620, "stubs": [{"predicates": [pred], "responses": [{"is": {}}]}]}, base=False)
        C(f'xpath ns={json.dumps(ns)} cs={cs} path', 'POST', '/imposters', body={"protocol": "http", "port": 25620, "stubs": [{"predicates": [{"equals": {"path": "/"}, "xpath": {"selector": "//a", "ns": ns}}], "responses": [{"is": {}}]}]}, base=False)
        C(f'copy xpath ns={json.dumps(ns)}', 'POST', '/imposters', body={"protocol": "http", "port": 25620, "stubs": [{"responses": [{"is": {}, "behaviors": [{"copy": {"from": "body", "into": "X", "using": {"method": "xpath", "selector": "//a", "ns": ns}}}]}]}]}, base=False)
