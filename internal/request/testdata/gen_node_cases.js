// Generates node_cases.json: how node 20 (Mountebank's runtime) parses request
// targets (new URL(..).pathname / search) and query strings (querystring.parse).
//   node gen_node_cases.js > node_cases.json
'use strict';
const qs = require('querystring');
const targets = ['/', '/a/../b', '/a/./b/', '/%2e%2e/x', '/a/%2E/b', '/a b', '/a"b<c>`{}|^', '/a\\b', '//host/p',
    '*', 'a/b', 'http://h:1/x/y?z', 'HTTP://x/Y', '/a?b#c', '/a#b?c', '/%zz/%41', '/a/..', '/a/.', '/a/b/..%2F', '/\x7f',
    '\t/a\n/b ', "/[]@!$&'()*+,;=:", '/a;b', '/../..', '/.%2e/x', '/a%2e/b', '/users/42?x=1&y=2', '/?', '/a?', '/a/b/c/../../d',
    '/a//b', '/a/%2e%2E/b', '/a/.../b', '/x?a=b?c', 'mailto:x', '/A/B', '/%7e/~'];
const queries = ['a=1&a=2', 'a&b=', '&&', '=x', '=', 'a=&=', 'a=%zz&b=%41+c', 'a=1&A=2', 'x=&x=a', 'a%20b=c', 'a=b=c', 'a=%E2%82',
    'a=%FF', 'a+b=c+d', '%2B', 'a=%ED%A0%80', 'a=%C0%80', 'a=%F0%9F%98%80', '+=+', 'é%zz=é%zz', '%C3%A9%zz', 'q=caf%C3%A9', 'a=%', 'a=%4', '%=%%'];
const out = {
    urls: targets.map(t => { try { const u = new URL(t, 'http://localhost'); return [t, u.pathname, u.search === '' ? '' : u.search.substr(1)]; } catch (e) { return [t, null, null]; } }),
    queries: queries.map(q => [q, qs.parse(q)])
};
const bufs = [[0x61, 0xff, 0x62], [0xe2, 0x82], [0xe2, 0x82, 0x61], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xc0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe0, 0x80, 0x80], [0xc3, 0xa9]];
out.utf8 = bufs.map(b => [b, Buffer.from(b).toString()]);
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
