# Admin cases of 2026-11-27 (diff11): links under odd Host / X-Forwarded-* headers, query flags
# of GET/DELETE (replayable, removeProxies), stub insertion by index, mixed valid and invalid
# stubs in one change, and the saved-request/proxy-response endpoints.
CASES = []
def C(name, method, path, body=None, headers=None, **kw):
    CASES.append(dict(name=name, method=method, path=path, body=body, headers=headers, **kw))

hosts = {
    'host name': {'Host': 'a.example:99'},
    'host no port': {'Host': 'a.example'},
    'host ipv6': {'Host': '[::1]:2525'},
    'host empty': {'Host': ''},
    'x-forwarded': {'Host': 'a.example', 'X-Forwarded-Host': 'b.example', 'X-Forwarded-Proto': 'https'},
    'x-forwarded-for': {'X-Forwarded-For': '10.0.0.1', 'Forwarded': 'host=c.example;proto=https'},
}
for n, h in hosts.items():
    C(f'links GET / {n}', 'GET', '/', headers=h)
    C(f'links GET imposters {n}', 'GET', '/imposters', headers=h)
    C(f'links GET imposter {n}', 'GET', '/imposters/25610', headers=h)
    C(f'links GET stubs {n}', 'GET', '/imposters/25610/stubs', headers=h)
    C(f'links POST imposters {n}', 'POST', '/imposters', body={"protocol": "http", "port": 25620}, headers=dict(h, **{'Content-Type': 'application/json'}))
    C(f'links POST stubs {n}', 'POST', '/imposters/25610/stubs', body={"stub": {"responses": [{"is": {}}]}}, headers=dict(h, **{'Content-Type': 'application/json'}))

for q in ['replayable=true&removeProxies=true', 'replayable=false&removeProxies=true', 'replayable=1',
          'replayable=TRUE', 'replayable=', 'removeProxies=yes', 'replayable=true&replayable=false',
          'replayable[]=true', 'replayable=true&removeProxies=false']:
    C(f'query GET imposters {q}', 'GET', '/imposters?' + q)
    C(f'query GET imposter {q}', 'GET', '/imposters/25610?' + q)
    C(f'query DELETE imposter {q}', 'DELETE', '/imposters/25610?' + q)
    C(f'query DELETE imposters {q}', 'DELETE', '/imposters?' + q)

ok = {"responses": [{"is": {"body": "new"}}]}
for idx in [0, 1, 2, 3, 5, 100, -1, -3, "1", "x", 1.5, None, True, [1]]:
    C(f'index POST stubs {idx!r}', 'POST', '/imposters/25610/stubs', body={"index": idx, "stub": ok})
for at in ['2', '5', '-1', '1.0', '01', 'x']:
    C(f'index PUT stub {at}', 'PUT', f'/imposters/25610/stubs/{at}', body=ok)
    C(f'index DELETE stub {at}', 'DELETE', f'/imposters/25610/stubs/{at}')

bad = {"predicates": [{"equals": 1}], "responses": [{"is": {}}]}
bad2 = {"responses": [{"is": {"statusCode": "abc"}}]}
C('mixed PUT stubs valid, invalid', 'PUT', '/imposters/25610/stubs', body={"stubs": [ok, bad]})
C('mixed PUT stubs invalid, valid', 'PUT', '/imposters/25610/stubs', body={"stubs": [bad2, ok]})
C('mixed PUT stubs two invalid', 'PUT', '/imposters/25610/stubs', body={"stubs": [bad, bad2]})
C('mixed PUT imposters valid, invalid stub', 'PUT', '/imposters', body={"imposters": [
    {"protocol": "http", "port": 25620, "stubs": [ok]}, {"protocol": "http", "port": 25621, "stubs": [bad]}]})
C('mixed PUT imposters invalid protocol second', 'PUT', '/imposters', body={"imposters": [
    {"protocol": "http", "port": 25620}, {"protocol": "nope", "port": 25621}]})
C('mixed PUT imposters same port twice', 'PUT', '/imposters', body={"imposters": [
    {"protocol": "http", "port": 25620}, {"protocol": "http", "port": 25620, "name": "second"}]})
C('mixed POST imposters stubs valid, invalid', 'POST', '/imposters', body={"protocol": "http", "port": 25620, "stubs": [ok, bad2]})

for path in ['/imposters/25610/savedProxyResponses', '/imposters/25699/savedProxyResponses',
             '/imposters/25610/savedRequests', '/imposters/25699/savedRequests',
             '/imposters/25610/requests', '/imposters/x/savedRequests']:
    C(f'saved DELETE {path}', 'DELETE', path)
    C(f'saved GET {path}', 'GET', path)
    C(f'saved POST {path}', 'POST', path, body={})
