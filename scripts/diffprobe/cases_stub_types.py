CASES=[]
def C(name, body, **kw): CASES.append(dict(name=name, method='POST', path='/imposters', body=body, base=False, **kw))
P='http://127.0.0.1:1'
for v in [True, 1, "s", {}, [1], [None], ["s"], [[1]], [{"inject": "function(){}"}], [{"matches": {"path": True}}]]:
    C(f'pg {v}', {"protocol":"http","port":25720,"stubs":[{"responses":[{"proxy":{"to":P,"predicateGenerators":v}}]}]})
    C(f'tcp pg {v}', {"protocol":"tcp","port":25720,"stubs":[{"responses":[{"proxy":{"to":"tcp://127.0.0.1:1","predicateGenerators":v}}]}]})
for v in [True, 1, "s", {}, {"a": {"inject": "x"}}, "", 0, False]:
    C(f'preds {v}', {"protocol":"http","port":25720,"stubs":[{"predicates": v, "responses":[{"is":{}}]}]})
    C(f'tcp preds {v}', {"protocol":"tcp","port":25720,"stubs":[{"predicates": v, "responses":[{"is":{}}]}]})
for v in ["", 0, False]:
    C(f'stubs {v!r}', {"protocol":"http","port":25720,"stubs":v})
    C(f'behaviors {v!r}', {"protocol":"http","port":25720,"stubs":[{"responses":[{"is":{},"behaviors":v}]}]})
    C(f'_behaviors {v!r}', {"protocol":"http","port":25720,"stubs":[{"responses":[{"is":{},"_behaviors":v}]}]})
for v in ["s", "", True, 1, 0, False]:
    C(f'response {v!r}', {"protocol":"http","port":25720,"stubs":[{"responses":[v]}]})
    C(f'response second {v!r}', {"protocol":"http","port":25720,"stubs":[{"responses":[{"is":{}}, v]}]})
for v in [True, 1, "s", [], [1], {"to": []}, 0, ""]:
    C(f'proxy {v!r}', {"protocol":"http","port":25720,"stubs":[{"responses":[{"proxy": v}]}]})
for v in ["", 0, False, None]:
    C(f'pred elem {v!r}', {"protocol":"http","port":25720,"stubs":[{"predicates":[v],"responses":[{"is":{}}]}]})
    C(f'pred not {v!r}', {"protocol":"http","port":25720,"stubs":[{"predicates":[{"not": v}],"responses":[{"is":{}}]}]})
    C(f'pred and {v!r}', {"protocol":"http","port":25720,"stubs":[{"predicates":[{"and": [v]}],"responses":[{"is":{}}]}]})
for v in [None, True, 1, [], {}]:
    C(f'protocol {v!r}', {"protocol": v, "port":25720})
