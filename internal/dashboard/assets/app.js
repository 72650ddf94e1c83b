// mockd dashboard. Plain JavaScript, no dependencies: every page reads the admin API (with the
// x-api-key header when the user gave a key) and reads it again every second while visible.
'use strict';

(function () {
  const KEY = 'mockd.apikey';
  const main = document.getElementById('main');
  const liveEl = document.getElementById('live');
  const keyDialog = document.getElementById('key-dialog');
  const keyInput = document.getElementById('key-input');
  const keyButton = document.getElementById('key-button');
  const copyDialog = document.getElementById('copy-dialog');
  const keyRequired = document.querySelector('meta[name="mockd-apikey"]').content === 'required';

  // ---- DOM helpers -------------------------------------------------------------------------

  // h builds an element: attrs are properties (class, text, on…) or attributes; children are
  // nodes, strings, arrays or nothing.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else el.append(c instanceof Node ? c : String(c));
    }
  }

  // section returns the element with this id inside main, creating it once: pages update their
  // sections in place so that open details, selections and focus survive a refresh.
  function section(id, build) {
    let el = document.getElementById(id);
    if (!el) {
      el = build();
      el.id = id;
      main.append(el);
    }
    return el;
  }

  function replaceChildren(el, ...children) {
    el.textContent = '';
    append(el, children);
  }

  // keepOpen rebuilds el's children while keeping the details elements that were open open
  // (matched by their data-key).
  function keepOpen(el, build) {
    const open = new Set([...el.querySelectorAll('details[open][data-key]')].map(d => d.dataset.key));
    replaceChildren(el, build());
    for (const d of el.querySelectorAll('details[data-key]')) {
      if (open.has(d.dataset.key)) d.open = true;
    }
  }

  let toastTimer;
  function toast(message, isError) {
    const el = document.getElementById('toast');
    el.textContent = message;
    el.className = isError ? 'show error' : 'show';
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.className = ''; }, 4000);
  }

  const fmt = new Intl.NumberFormat();
  function num(n) { return fmt.format(n); }

  function time(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return iso || '';
    const p = (n, w) => String(n).padStart(w || 2, '0');
    return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
  }

  function compact(v, max) {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return max && s.length > max ? s.slice(0, max - 1) + '…' : s;
  }

  function pretty(v) {
    if (typeof v === 'string') {
      try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; }
    }
    return JSON.stringify(v, null, 2);
  }

  // ---- the admin API -----------------------------------------------------------------------

  class KeyNeeded extends Error {}

  class NotFound extends Error {}

  async function api(path, options) {
    const opts = options || {};
    // Reads are marked so that mockd logs the page's refreshes at debug, not its actions.
    const headers = { Accept: 'application/json' };
    if (opts.refresh) headers['X-Mockd-Dashboard'] = 'refresh';
    const key = sessionStorage.getItem(KEY);
    if (key) headers['x-api-key'] = key;
    if (keyRequired && !key) {
      askKey('This mockd was started with --apikey: enter the key to see its imposters.');
      throw new KeyNeeded();
    }
    const res = await fetch(path, { method: opts.method || 'GET', headers: headers, cache: 'no-store' });
    if (res.status === 401) {
      askKey(key ? 'The API refused that key (401). Enter the key mockd was started with.'
        : 'The API wants a key (401): enter the key mockd was started with.');
      throw new KeyNeeded();
    }
    if (!res.ok) {
      let message = res.status + ' ' + res.statusText;
      try {
        const body = await res.json();
        if (body.errors && body.errors[0]) message = body.errors[0].message;
      } catch (e) { /* not JSON */ }
      throw res.status === 404 ? new NotFound(message) : new Error(message);
    }
    return opts.raw ? res : res.json();
  }

  function askKey(message) {
    document.getElementById('key-message').textContent = message;
    keyInput.value = '';
    if (!keyDialog.open) keyDialog.showModal();
    keyInput.focus();
  }

  document.getElementById('key-form').addEventListener('submit', e => {
    e.preventDefault();
    sessionStorage.setItem(KEY, keyInput.value);
    keyDialog.close();
    showKeyButton();
    refresh();
  });
  document.getElementById('key-forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    keyDialog.close();
    showKeyButton();
    refresh();
  });
  keyButton.addEventListener('click', () => askKey('Change the key this tab sends to the admin API.'));
  function showKeyButton() { keyButton.hidden = !(keyRequired || sessionStorage.getItem(KEY)); }
  showKeyButton();

  document.getElementById('copy-form').addEventListener('submit', e => {
    e.preventDefault();
    copyDialog.close();
  });

  async function download(path, filename) {
    try {
      const res = await api(path, { raw: true });
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', { href: url, download: filename, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      toast('Saved ' + filename);
    } catch (e) {
      if (!(e instanceof KeyNeeded)) toast('Download failed: ' + e.message, true);
    }
  }

  // act runs an admin call for a button, then refreshes the page.
  async function act(what, method, path, after) {
    try {
      await api(path, { method: method });
      toast(what);
      if (after) after(); else refresh();
    } catch (e) {
      if (!(e instanceof KeyNeeded)) toast(what + ' failed: ' + e.message, true);
    }
  }

  function deleteImposter(im, after) {
    if (!confirm('Delete the imposter on port ' + im.port + '? It stops listening.')) return;
    act('Deleted imposter ' + im.port, 'DELETE', '/imposters/' + im.port, after);
  }

  function clearRequests(im) {
    if (!confirm('Clear the recorded requests and counts of imposter ' + im.port + '?')) return;
    act('Cleared the requests of imposter ' + im.port, 'DELETE', '/imposters/' + im.port + '/savedRequests');
  }

  // ---- refreshing --------------------------------------------------------------------------

  let page = null;
  let timer = 0;
  let running = false;
  let again = false;

  async function refresh() {
    clearTimeout(timer);
    if (running) { again = true; return; }
    if (document.hidden || keyDialog.open) { schedule(); return; }
    running = true;
    try {
      page.render(await page.load());
      setLive(true);
    } catch (e) {
      if (e instanceof NotFound && page.gone) {
        page.gone(e.message);
        running = false;
        setLive(true);
        return; // nothing left to follow
      }
      if (!(e instanceof KeyNeeded)) setLive(false, e.message);
    }
    running = false;
    if (again) { again = false; refresh(); return; }
    schedule();
  }

  function schedule() { timer = setTimeout(refresh, page.interval || 1000); }

  function setLive(ok, message) {
    const now = new Date();
    liveEl.textContent = ok ? 'live · ' + time(now.toISOString()).slice(0, 8) : 'cannot reach mockd: ' + message;
    liveEl.className = ok ? 'live ok' : 'live down';
    liveEl.dataset.updated = String(now.getTime());
  }

  document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });

  // ---- imposters ---------------------------------------------------------------------------

  // Request rates come from the counters: the change since the previous read, per second.
  const seen = new Map();
  function rate(im) {
    const now = performance.now();
    const prev = seen.get(im.port);
    seen.set(im.port, { n: im.numberOfRequests, t: now, r: prev ? prev.r : 0 });
    if (!prev || now - prev.t < 200) return prev ? prev.r : 0;
    const dn = im.numberOfRequests - prev.n;
    const r = dn > 0 ? dn / ((now - prev.t) / 1000) : 0;
    seen.get(im.port).r = r;
    return r;
  }

  function rateText(r) { return r >= 10 ? num(Math.round(r)) : r > 0 ? r.toFixed(1) : '0'; }

  function imposterLabel(im) { return im.protocol + ' :' + im.port + (im.name ? ' ' + im.name : ''); }

  function impostersTable(list, withActions) {
    if (list.length === 0) {
      return h('p', { class: 'empty' }, 'No imposters. Create one with POST /imposters or start mockd with -c stubs.yaml.');
    }
    return h('table', { class: 'imposters' },
      h('thead', null, h('tr', null,
        h('th', { text: 'Protocol' }), h('th', { text: 'Port' }), h('th', { text: 'Name' }),
        h('th', { class: 'num', text: 'Requests' }), h('th', { class: 'num', text: 'No match' }),
        h('th', { class: 'num', text: 'Rate /s' }), h('th', { class: 'num', text: 'Stubs' }),
        h('th', { text: 'Recording' }), h('th', { text: 'Verify' }), withActions ? h('th', { text: '' }) : null)),
      h('tbody', null, list.slice().sort((a, b) => a.port - b.port).map(im => h('tr', { 'data-port': im.port },
        h('td', null, h('span', { class: 'proto ' + im.protocol, text: im.protocol })),
        h('td', null, h('a', { href: '/imposters/' + im.port, text: String(im.port) })),
        h('td', { text: im.name || '' }),
        h('td', { class: 'num requests', text: num(im.numberOfRequests) }),
        h('td', { class: 'num nomatch' + (im.noMatch > 0 ? ' warn' : ''), text: num(im.noMatch) }),
        h('td', { class: 'num rate', text: rateText(rate(im)) }),
        h('td', { class: 'num', text: num(im.stubCount) }),
        h('td', { text: im.recordRequests ? 'on' : 'off' }),
        h('td', { class: 'verify' }, verifyText(im)),
        withActions ? h('td', { class: 'actions' },
          h('button', { type: 'button', class: 'small', 'data-action': 'clear', onclick: () => clearRequests(im) }, 'Clear requests'),
          h('button', { type: 'button', class: 'small danger', 'data-action': 'delete', onclick: () => deleteImposter(im) }, 'Delete')) : null))));
  }

  // verifyText is an imposter's line of GET /verify: what fails it, or that it passes.
  function verifyText(im) {
    const problems = [];
    if (im.expectationsFailed) problems.push(im.expectationsFailed + ' expectation' + (im.expectationsFailed > 1 ? 's' : '') + ' failed');
    if (im.unusedStubs) problems.push(im.unusedStubs + ' unused stub' + (im.unusedStubs > 1 ? 's' : ''));
    if (im.noMatch) problems.push(im.noMatch + ' unmatched');
    return problems.length ? h('span', { class: 'bad', text: problems.join(' · ') }) : h('span', { class: 'good', text: 'passed' });
  }

  // verdictView is GET /verify's verdict in one line, with its JSON a click away.
  function verdictView(v) {
    const parts = [v.expectations + ' expectation' + (v.expectations === 1 ? '' : 's') + ', ' + v.expectationsFailed + ' failed',
      v.unusedStubs + ' unused stub' + (v.unusedStubs === 1 ? '' : 's'),
      v.unmatchedRequests + ' unmatched request' + (v.unmatchedRequests === 1 ? '' : 's')];
    return h('div', { class: 'verdict-line ' + (v.passed ? 'good' : 'bad') },
      h('b', { text: 'Verify: ' + (v.passed ? 'passed' : 'failed') }), ' · ', parts.join(' · '), ' ',
      h('button', { type: 'button', class: 'small', id: 'verdict-download', onclick: () => download('/verify', 'verdict.json'),
        title: 'GET /verify, what mockd verify reports' }, 'Download verdict'));
  }

  function saveButton() {
    return h('button', { type: 'button', id: 'save', onclick: () => download('/imposters?replayable=true', 'imposters.json'),
      title: 'GET /imposters?replayable=true as a file, as mockd save (or mb save) writes it' }, 'Download config (save)');
  }

  const overview = {
    load: () => api('/dashboard/api/imposters', { refresh: true }),
    render(data) {
      const list = data.imposters;
      const total = list.reduce((a, im) => a + im.numberOfRequests, 0);
      const noMatch = list.reduce((a, im) => a + im.noMatch, 0);
      const head = section('overview-head', () => h('div', { class: 'page-head' },
        h('h1', { text: 'Overview' }), h('div', { class: 'buttons' }, saveButton())));
      head.hidden = false;
      const cards = section('cards', () => h('div', { class: 'cards' }));
      const rows = impostersTable(list, false);
      const r = list.reduce((a, im) => a + (seen.get(im.port) ? seen.get(im.port).r : 0), 0);
      replaceChildren(cards,
        card('Imposters', num(list.length), 'imposters'),
        card('Requests', num(total), 'requests'),
        card('No match', num(noMatch), 'nomatch', noMatch > 0),
        card('Requests /s', rateText(r), 'rate'),
        card('Verify', data.verdict.passed ? 'passed' : 'failed', 'verify', !data.verdict.passed));
      const verdict = section('verdict', () => h('div'));
      replaceChildren(verdict, verdictView(data.verdict));
      const table = section('imposters', () => h('section', null, h('h2', { text: 'Imposters' }), h('div')));
      replaceChildren(table.lastChild, rows);
    },
  };

  function card(label, value, key, warn) {
    return h('div', { class: 'card' + (warn ? ' warn' : ''), 'data-card': key },
      h('div', { class: 'value', text: value }), h('div', { class: 'label', text: label }));
  }

  const imposters = {
    load: () => api('/dashboard/api/imposters', { refresh: true }),
    render(data) {
      section('imposters-head', () => h('div', { class: 'page-head' },
        h('h1', { text: 'Imposters' }), h('div', { class: 'buttons' }, saveButton())));
      const table = section('imposters', () => h('section'));
      replaceChildren(table, impostersTable(data.imposters, true));
    },
  };

  // ---- one imposter ------------------------------------------------------------------------

  const PREDICATE_OPS = ['equals', 'deepEquals', 'contains', 'startsWith', 'endsWith', 'matches', 'exists', 'not', 'or', 'and', 'inject'];

  // predicateView renders a predicate readably: operator, then field: value pairs (objects such
  // as query and headers one level deep), then its parameters.
  function predicateView(p) {
    if (!p || typeof p !== 'object') return h('code', { text: compact(p) });
    const op = PREDICATE_OPS.find(o => o in p);
    if (!op) return h('code', { text: compact(p, 200) });
    const v = p[op];
    if (op === 'not') return h('span', { class: 'pred' }, h('b', { text: 'not ' }), '(', predicateView(v), ')');
    if (op === 'and' || op === 'or') {
      const parts = [];
      (Array.isArray(v) ? v : []).forEach((q, i) => {
        if (i > 0) parts.push(h('b', { text: ' ' + op + ' ' }));
        parts.push(predicateView(q));
      });
      return h('span', { class: 'pred' }, '(', parts, ')');
    }
    if (op === 'inject') return h('span', { class: 'pred' }, h('b', { text: 'inject ' }), h('code', { text: compact(v, 80) }));
    const fields = [];
    for (const [k, val] of Object.entries(v || {})) {
      if (val && typeof val === 'object' && !Array.isArray(val) && k !== 'body') {
        for (const [k2, v2] of Object.entries(val)) fields.push([k + '.' + k2, v2]);
      } else {
        fields.push([k, val]);
      }
    }
    const params = ['caseSensitive', 'except', 'keyCaseSensitive', 'jsonpath', 'xpath']
      .filter(k => k in p).map(k => h('span', { class: 'param', text: k + ' ' + compact(p[k], 60) }));
    return h('span', { class: 'pred' }, h('b', { text: op + ' ' }),
      fields.map(([k, val], i) => [i ? ', ' : '', h('code', { class: 'field', text: k }), ' ', h('code', { text: compact(val, 120) })]),
      params.length ? [' ', params] : null);
  }

  // responseView renders a response in one line: its kind, what it answers and its behaviors.
  function responseView(r) {
    if (!r || typeof r !== 'object') return h('code', { text: compact(r) });
    const extra = [];
    const behaviors = r.behaviors || r._behaviors;
    if (behaviors) {
      const names = Array.isArray(behaviors) ? behaviors.flatMap(b => Object.keys(b)) : Object.keys(behaviors);
      extra.push(h('span', { class: 'param', text: '+ ' + names.join(', ') }));
    }
    if (r.repeat) extra.push(h('span', { class: 'param', text: '× ' + r.repeat }));
    let main;
    if (r.is) {
      const is = r.is;
      main = [h('b', { text: 'is ' }), is.statusCode !== undefined ? h('code', { class: 'status', text: String(is.statusCode) }) : null,
        is.data !== undefined ? [' ', h('code', { text: compact(is.data, 100) })] : null,
        is.body !== undefined ? [' ', h('code', { text: compact(is.body, 100) })] : null];
    } else if (r.proxy) {
      main = [h('b', { text: 'proxy ' }), h('code', { text: '→ ' + compact(r.proxy.to, 100) }),
        r.proxy.mode ? h('span', { class: 'param', text: r.proxy.mode }) : null];
    } else if (r.inject) {
      main = [h('b', { text: 'inject ' }), h('code', { text: compact(r.inject, 80) })];
    } else if (r.fault) {
      main = [h('b', { text: 'fault ' }), h('code', { text: compact(r.fault) })];
    } else {
      main = h('code', { text: compact(r, 120) });
    }
    return h('span', { class: 'resp' }, main, extra.length ? [' ', extra] : null);
  }

  // stubStatus shows a stub's hits and its verdict (GET /verify's): its expectation met or
  // not, or that it answered nothing.
  function stubStatus(s, def) {
    if (s.hits === undefined) return null;
    const parts = [h('span', { class: 'hits', title: 'requests this stub answered', text: num(s.hits) + (s.hits === 1 ? ' hit' : ' hits') })];
    if (def.expect !== undefined) {
      parts.push(h('span', { class: 'verdict ' + (s.status === 'failed' ? 'bad' : 'good'), 'data-status': s.status,
        title: s.message || 'expectation met', text: 'expects ' + expectText(def.expect) + (s.status === 'failed' ? ' ✗' : ' ✓') }));
    } else if (s.status === 'unused') {
      parts.push(h('span', { class: 'verdict unused', 'data-status': s.status, text: 'unused' }));
    }
    return h('span', { class: 'stub-status' }, parts);
  }

  // expectText says a stub's expect in words: exactly 2, at least 1, at most 3, 1 to 3.
  function expectText(e) {
    if (!e || typeof e !== 'object') return compact(e, 60);
    if ('times' in e) return 'exactly ' + e.times;
    if ('atLeast' in e && 'atMost' in e) return e.atLeast + ' to ' + e.atMost;
    if ('atLeast' in e) return 'at least ' + e.atLeast;
    if ('atMost' in e) return 'at most ' + e.atMost;
    return compact(e, 60);
  }

  function stubsView(im) {
    if (im.stubs.length === 0) return h('p', { class: 'empty', text: 'No stubs: every request gets the default response.' });
    return h('ol', { class: 'stubs' }, im.stubs.map((s, i) => {
      const def = s.definition || {};
      const preds = Array.isArray(def.predicates) ? def.predicates : [];
      const resps = Array.isArray(def.responses) ? def.responses : [];
      return h('li', { id: 'stub-' + i, 'data-stub': i, class: s.status === 'failed' ? 'failed' : null },
        h('details', { 'data-key': 'stub-' + i },
          h('summary', { class: 'stub-head' }, h('span', { class: 'idx', text: '#' + i }),
            h('span', { class: 'preds' }, preds.length
              ? preds.map((p, j) => [j ? h('b', { class: 'and', text: ' and ' }) : '', predicateView(p)])
              : h('span', { class: 'muted', text: 'every request' })),
            h('span', { class: 'responses' }, resps.map((r, j) => [h('span', { class: 'arrow', text: j ? ' then ' : ' → ' }), responseView(r)])),
            stubStatus(s, def)),
          h('pre', { text: JSON.stringify(def, null, 2) })),
        s.status === 'failed' && s.message ? h('p', { class: 'verdict-message', text: s.message }) : null);
    }));
  }

  function shellQuote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

  // curlFor builds a curl command that sends the recorded request to the imposter again.
  function curlFor(im, req) {
    const host = location.hostname.includes(':') && !location.hostname.startsWith('[') ? '[' + location.hostname + ']' : location.hostname;
    const query = [];
    for (const [k, v] of Object.entries(req.query || {})) {
      for (const one of Array.isArray(v) ? v : [v]) query.push(encodeURIComponent(k) + '=' + encodeURIComponent(one));
    }
    const url = (im.protocol === 'https' ? 'https' : 'http') + '://' + host + ':' + im.port + (req.path || '/') +
      (query.length ? '?' + query.join('&') : '');
    const parts = ['curl'];
    if (im.protocol === 'https') parts.push('-k');
    const body = req.body === undefined || req.body === null ? '' : String(req.body);
    if ((req.method || 'GET') !== 'GET' || body !== '') parts.push('-X', req.method);
    for (const [name, v] of Object.entries(req.headers || {})) {
      if (/^(host|content-length|connection)$/i.test(name)) continue;
      for (const one of Array.isArray(v) ? v : [v]) parts.push('-H', shellQuote(name + ': ' + one));
    }
    if (body !== '') parts.push('--data-raw', shellQuote(body));
    parts.push(shellQuote(url));
    return parts.join(' ');
  }

  async function copyCurl(im, req) {
    const cmd = curlFor(im, req);
    document.body.dataset.lastCopied = cmd;
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(cmd);
      toast('Copied: ' + compact(cmd, 100));
    } catch (e) {
      const text = document.getElementById('copy-text');
      text.value = cmd;
      if (!copyDialog.open) copyDialog.showModal();
      text.select();
    }
  }

  function requestLine(im, req) {
    if (im.protocol === 'tcp') return h('code', { text: compact(req.data, 120) });
    if (im.protocol === 'smtp') return h('span', null, h('code', { text: compact(req.envelopeFrom || '', 60) }), ' → ', h('code', { text: compact(req.envelopeTo || [], 80) }), ' ', compact(req.subject || '', 80));
    if (im.protocol !== 'http' && im.protocol !== 'https') {
      // A custom protocol's (--protofile) request has the fields its program sent: its data, or all of them.
      const { timestamp, ...fields } = req;
      return h('code', { text: compact(typeof req.data === 'string' ? req.data : fields, 120) });
    }
    const q = Object.entries(req.query || {}).map(([k, v]) => k + '=' + v).join('&');
    return h('span', null, h('b', { class: 'method', text: req.method }), ' ', h('code', { text: compact(req.path + (q ? '?' + q : ''), 140) }));
  }

  // answeredBy names the stub that answered a request, or says that none did.
  function answeredBy(entry) {
    if (typeof entry.stub === 'number') {
      return h('a', { href: '#stub-' + entry.stub, class: 'matched', 'data-stub': entry.stub, text: 'stub #' + entry.stub });
    }
    if (entry.matchError) return h('span', { class: 'nomatch-tag', text: 'error' });
    if (entry.noMatch) return h('span', { class: 'nomatch-tag', text: 'no match' });
    return null;
  }

  // requestDetail shows an http request's parts readably; other protocols' as JSON.
  function requestDetail(im, req, truncated) {
    const cutNote = truncated ? h('p', { class: 'muted truncated', text: Object.entries(truncated).map(([k, n]) =>
      k + ': ' + n + ' bytes, the first 64 KiB shown').join('; ') + ' (GET /imposters/' + im.port + ' has the whole request).' }) : null;
    if (im.protocol !== 'http' && im.protocol !== 'https') return h('div', null, cutNote, h('pre', { text: pretty(req) }));
    const rows = [['from', req.requestFrom]];
    for (const [k, v] of Object.entries(req.query || {})) rows.push(['query ' + k, Array.isArray(v) ? v.join(', ') : v]);
    for (const [k, v] of Object.entries(req.headers || {})) rows.push([k, Array.isArray(v) ? v.join(', ') : v]);
    for (const [k, v] of Object.entries(req.form || {})) rows.push(['form ' + k, v]);
    return h('div', { class: 'request-detail' },
      h('table', { class: 'kv small' }, h('tbody', null, rows.map(([k, v]) => h('tr', null, h('th', { text: k }), h('td', null, h('code', { text: String(v) })))))),
      cutNote, req.body !== undefined && req.body !== '' ? h('pre', { class: 'body', text: pretty(req.body) }) : null);
  }

  // failureText says why a predicate failed, as mockd's explanation gives it: the operator, the
  // field, what it expected and what the request had.
  function failureText(f) {
    if (!f) return '';
    let t = f.operator + (f.field ? ' ' + f.field : '') + ': ';
    const json = v => compact(JSON.stringify(v === undefined ? null : v), 120);
    if (f.field) t += 'expected ' + json(f.expected) + (f.missing ? ', but the request has none' : ', got ' + json(f.actual));
    else t += f.message || '';
    return t;
  }

  // explanationView shows why no stub matched: the nearest stubs, each with how many of its
  // checks passed and the first that failed.
  function explanationView(ex) {
    if (!ex || !Array.isArray(ex.nearest)) return null;
    if (ex.nearest.length === 0) return h('div', { class: 'explain' }, 'The imposter has no stubs.');
    return h('div', { class: 'explain' }, h('h4', { text: 'Why no stub matched: the nearest stubs' }),
      h('ul', null, ex.nearest.map(n => h('li', { 'data-stub': n.stub },
        h('a', { href: '#stub-' + n.stub, text: 'stub #' + n.stub }),
        h('span', { class: 'muted', text: ' (' + n.satisfied + ' of ' + n.total + ' checks passed) ' }),
        n.error ? h('span', { class: 'bad', text: 'error: ' + n.error }) : h('code', { text: failureText(n.failure) }),
        n.failure && Array.isArray(n.failure.causes) && n.failure.causes.length
          ? h('ul', null, n.failure.causes.map(c => h('li', null, h('code', { text: failureText(c) })))) : null))));
  }

  function requestsView(im) {
    if (!im.recordRequests) {
      return h('p', { class: 'empty' }, 'This imposter does not record requests (recordRequests is off): only its counts are shown. ' +
        'Create it with "recordRequests": true, or start mockd with --mock, to see them here.');
    }
    if (im.requests.length === 0) return h('p', { class: 'empty', text: 'No requests recorded yet.' });
    return h('div', { class: 'request-list' }, im.requests.map((entry, i) => {
      const req = entry.request;
      const key = entry.timestamp + '|' + (im.numberOfRequests - i);
      return h('details', { class: 'request', 'data-key': key },
        h('summary', null, h('span', { class: 'time', text: time(entry.timestamp) }), ' ', requestLine(im, req), ' ', answeredBy(entry),
          im.protocol === 'http' || im.protocol === 'https' ? h('button', { type: 'button', class: 'small copy', 'data-action': 'curl',
            disabled: entry.truncated ? true : null,
            title: entry.truncated ? 'The body is too large for the page: GET /imposters/' + im.port + ' has the whole request'
              : 'Copy a curl command that sends this request again',
            onclick: ev => { ev.preventDefault(); copyCurl(im, req); } }, 'Copy as curl') : null),
        explanationView(entry.explanation),
        requestDetail(im, req, entry.truncated));
    }));
  }

  function imposterPage(port) {
    return {
      load: () => api('/dashboard/api/imposters/' + port, { refresh: true }),
      render(im) {
        document.title = 'mockd · ' + imposterLabel(im);
        const head = section('imposter-head', () => h('div', { class: 'page-head' },
          h('h1'),
          h('div', { class: 'buttons' },
            h('button', { type: 'button', id: 'clear', onclick: () => clearRequests(im) }, 'Clear requests'),
            h('button', { type: 'button', id: 'download', onclick: () => download('/imposters/' + port + '?replayable=true', 'imposter-' + port + '.json') }, 'Download imposter'),
            h('button', { type: 'button', id: 'delete', class: 'danger', onclick: () => deleteImposter(im, () => { location.href = '/imposters'; }) }, 'Delete imposter'))));
        replaceChildren(head.firstChild, h('span', { class: 'proto ' + im.protocol, text: im.protocol }), ' :' + im.port + ' ', im.name || '');
        const cards = section('cards', () => h('div', { class: 'cards' }));
        replaceChildren(cards,
          card('Requests', num(im.numberOfRequests), 'requests'),
          card('No match', num(im.noMatch), 'nomatch', im.noMatch > 0),
          card('Requests /s', rateText(rate(im)), 'rate'),
          card('Stubs', num(im.stubCount), 'stubs'),
          card('Recording', im.recordRequests ? 'on' : 'off', 'recording'));
        const reqs = section('requests', () => h('section', null, h('h2', { text: 'Recent requests' }), h('div')));
        keepOpen(reqs.lastChild, () => requestsView(im));
        const stubs = section('stubs', () => h('section', null, h('h2'), h('div')));
        replaceChildren(stubs.firstChild, 'Stubs', im.stubCount > im.stubs.length
          ? h('span', { class: 'muted', text: ' (the first ' + im.stubs.length + ' of ' + num(im.stubCount) + '; GET /imposters/' + port + ' has them all)' }) : null);
        const sig = JSON.stringify(im.stubs);
        if (stubs.dataset.sig !== sig) {
          stubs.dataset.sig = sig;
          keepOpen(stubs.lastChild, () => stubsView(im));
        }
      },
      gone(message) {
        replaceChildren(main, h('div', { class: 'page-head' }, h('h1', { text: 'Imposter ' + port })),
          h('p', { class: 'empty' }, 'There is no imposter on port ' + port + ' (' + message + '). ', h('a', { href: '/imposters', text: 'All imposters' })));
      },
    };
  }

  // ---- logs --------------------------------------------------------------------------------

  const LEVELS = ['debug', 'info', 'warn', 'error'];

  // scopeOf splits "[http:4545 users] message" into its scope and the rest.
  function scopeOf(message) {
    const m = /^\[([^\]]*)\] ?([\s\S]*)$/.exec(message || '');
    return m ? { scope: m[1], text: m[2] } : { scope: '', text: message || '' };
  }

  const logs = {
    interval: 2000,
    load: () => api('/logs', { refresh: true }),
    render(data) {
      const controls = section('log-controls', () => {
        const level = h('select', { id: 'log-level', onchange: () => this.draw() },
          h('option', { value: '', text: 'all levels' }),
          LEVELS.map(l => h('option', { value: l, text: l + ' and above' })));
        const scope = h('select', { id: 'log-scope', onchange: () => this.draw() }, h('option', { value: '', text: 'all imposters' }));
        const search = h('input', { id: 'log-search', type: 'search', placeholder: 'filter text', oninput: () => this.draw() });
        return h('div', { class: 'page-head' }, h('h1', { text: 'Logs' }),
          h('div', { class: 'filters' }, h('label', null, 'Level ', level), h('label', null, 'Imposter ', scope), search));
      });
      const scopes = new Set(data.logs.map(e => scopeOf(e.message).scope).filter(Boolean));
      const select = controls.querySelector('#log-scope');
      const have = new Set([...select.options].map(o => o.value));
      for (const s of [...scopes].sort()) {
        if (!have.has(s)) select.append(h('option', { value: s, text: s.startsWith('mb:') ? s + ' (admin API)' : s }));
      }
      // Drawn again only when an entry came or went (a filter draws at once).
      const last = data.logs[data.logs.length - 1];
      const sig = data.logs.length + '|' + (last ? last.timestamp + last.message : '');
      if (sig === this.sig) return;
      this.sig = sig;
      this.data = data;
      this.draw();
    },
    draw() {
      const min = LEVELS.indexOf(document.getElementById('log-level').value);
      const scope = document.getElementById('log-scope').value;
      const text = document.getElementById('log-search').value.toLowerCase();
      const entries = this.data.logs.filter(e => {
        const s = scopeOf(e.message);
        return (min < 0 || LEVELS.indexOf(e.level) >= min) && (!scope || s.scope === scope) &&
          (!text || (e.message || '').toLowerCase().includes(text));
      }).reverse();
      const table = section('log-table', () => h('section'));
      replaceChildren(table, entries.length === 0 ? h('p', { class: 'empty', text: 'No log entries match.' })
        : h('table', { class: 'logs' },
          h('thead', null, h('tr', null, h('th', { text: 'Time' }), h('th', { text: 'Level' }), h('th', { text: 'Scope' }), h('th', { text: 'Message' }))),
          h('tbody', null, entries.map(e => {
            const s = scopeOf(e.message);
            return h('tr', { class: 'level-' + e.level, 'data-level': e.level, 'data-scope': s.scope },
              h('td', { class: 'time', text: time(e.timestamp) }), h('td', null, h('span', { class: 'level', text: e.level })),
              h('td', { class: 'scope', text: s.scope }), h('td', { class: 'message', text: s.text }));
          }))));
    },
  };

  // ---- config ------------------------------------------------------------------------------

  function bytes(n) { return n >= 1 << 20 ? (n / (1 << 20)).toFixed(1) + ' MiB' : num(n) + ' B'; }

  function duration(s) {
    const d = Math.floor(s / 86400); const hh = Math.floor(s % 86400 / 3600); const m = Math.floor(s % 3600 / 60);
    return (d ? d + 'd ' : '') + (d || hh ? hh + 'h ' : '') + m + 'm ' + Math.floor(s % 60) + 's';
  }

  function kvTable(obj, formats) {
    return h('table', { class: 'kv' }, h('tbody', null, Object.entries(obj || {}).map(([k, v]) => h('tr', { 'data-key': k },
      h('th', { text: k }), h('td', null, formats && formats[k] ? formats[k](v) : typeof v === 'object' && v !== null
        ? h('code', { text: JSON.stringify(v) }) : h('code', { text: String(v) }))))));
  }

  const configPage = {
    interval: 5000,
    load: () => api('/config', { refresh: true }),
    render(cfg) {
      section('config-head', () => h('div', { class: 'page-head' }, h('h1', { text: 'Config' })));
      const version = section('config-version', () => h('p', { class: 'lead' }));
      replaceChildren(version, 'Mountebank API version ', h('code', { text: cfg.version }), ' · process and options of this mockd (GET /config)');
      const opts = section('config-options', () => h('section', null, h('h2', { text: 'Options' }), h('div')));
      replaceChildren(opts.lastChild, kvTable(cfg.options, { apikey: v => h('code', { text: v ? '(set)' : 'null' }) }));
      const proc = section('config-process', () => h('section', null, h('h2', { text: 'Process' }), h('div')));
      const code = f => v => h('code', { text: f(v) });
      replaceChildren(proc.lastChild, kvTable(cfg.process, { rss: code(bytes), heapTotal: code(bytes), heapUsed: code(bytes), uptime: code(duration) }));
    },
  };

  // ---- start -------------------------------------------------------------------------------

  function route(path) {
    const m = /^\/imposters\/(\d+)\/?$/.exec(path);
    if (m) return { page: imposterPage(m[1]), nav: 'imposters' };
    switch (path.replace(/\/$/, '') || '/') {
      case '/imposters': return { page: imposters, nav: 'imposters' };
      case '/logs': return { page: logs, nav: 'logs' };
      case '/config': return { page: configPage, nav: 'config' };
      default: return { page: overview, nav: 'overview' };
    }
  }

  const r = route(location.pathname);
  page = r.page;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.nav === r.nav) a.setAttribute('aria-current', 'page');
  }
  const title = { overview: 'Overview', imposters: 'Imposters', logs: 'Logs', config: 'Config' }[r.nav];
  document.title = 'mockd · ' + title;
  main.textContent = '';
  refresh();
})();
