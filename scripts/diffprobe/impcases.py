# What the imposter case files (cases_*.py, run by probe_imp.py) share: their list of cases and
# the raw requests they send. probe_imp.py runs from this directory, so they import it by name.


def case_list(default_requests=(), **fixed):
    """A list of cases and the function adding one: a name, the imposter, the requests (text as
    Latin-1 bytes; default_requests when none), and the fields fixed and kw add."""
    cases = []

    def add(name, imposter, *requests, **kw):
        cases.append(dict(name=name, imposter=imposter,
                          requests=[r.encode('latin1') if isinstance(r, str) else r for r in (requests or default_requests)],
                          **fixed, **kw))
    return cases, add


def request(path='/', hdrs='', method='GET', body='', length=None):
    """An HTTP/1.1 request that closes its connection, with a Content-Length when it has a body
    (or when length says so)."""
    cl = f'Content-Length: {len(body.encode("latin1"))}\r\n' if (bool(body) if length is None else length) else ''
    return f'{method} {path} HTTP/1.1\r\nHost: x\r\n{hdrs}{cl}Connection: close\r\n\r\n{body}'
