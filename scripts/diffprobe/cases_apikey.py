CASES=[]
def C(name, method, path, body=None, headers=None, **kw):
    CASES.append(dict(name=name, method=method, path=path, body=body, headers=headers, **kw))
for ep in ['/', '/imposters', '/imposters/25610', '/imposters/25699', '/imposters/25610/stubs', '/config', '/logs', '/metrics', '/nope']:
    for m in ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD']:
        C(f'{m} {ep}', m, ep, body='{' if m == 'POST' else None, headers={'Content-Type': 'application/json'})
        C(f'{m} {ep} key', m, ep, body='{' if m == 'POST' else None, headers={'Content-Type': 'application/json', 'x-api-key': 'k'})
        C(f'{m} {ep} badkey', m, ep, headers={'x-api-key': 'K'})
        C(f'{m} {ep} html', m, ep, headers={'Accept': 'text/html'})
