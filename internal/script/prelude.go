package script

// preludeSource builds the Node-like environment Mountebank scripts expect: console, Buffer,
// process (env, nextTick), atob/btoa and require of a few safe modules (util, crypto, buffer,
// querystring). It is a function expression called once per runtime with the global object and
// the Go natives (see newRuntime).
const preludeSource = `(function (g, native) {
'use strict';
// V8's limits on what one operation may make, where goja has none: asking goja for a
// 100 GB string or buffer ended the process (the Go runtime cannot recover from running out of
// memory). A string is at most V8's String::kMaxLength characters ('Invalid string length', as
// node says); a Buffer at most native.maxBytes bytes ('Array buffer allocation failed', V8's
// error when the memory is not there). (new ArrayBuffer(n) and typed arrays are not guarded:
// goja's instanceof refuses a Proxy, and a subclass would not be the class of the arrays goja
// makes itself.)
const maxString = native.maxString > 0 ? native.maxString : 536870888;
const maxBytes = native.maxBytes;
const stringLength = function () { throw new RangeError('Invalid string length'); };
// A string of more characters than the call's memory limit has bytes (maxChars) is refused
// before it is made, with the limit's error (native.outOfMemory interrupts the call, as the
// memory watch does): 'x'.repeat(4e8) under the 256 MiB default took 400 MB, 800 MB for a
// two-byte string, before the watch's next look could stop it, and a padStart of as much went
// through between two looks. (Configuration templates have no memory limit of their own.)
const outOfMemory = native.outOfMemory, maxChars = Math.min(maxString, outOfMemory ? maxBytes : Infinity);
const stringTooLong = function (n) {
    if (n > maxString) { stringLength(); }
    outOfMemory();
};
const strProto = String.prototype;
const repeat = strProto.repeat, padStart = strProto.padStart, padEnd = strProto.padEnd, join = Array.prototype.join;
const method = function (proto, name, fn) {
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
};
method(strProto, 'repeat', { repeat(count) {
    const n = Math.floor(Number(count));
    if (n > 0 && n < Infinity && String(this).length * n > maxChars) { stringTooLong(String(this).length * n); }
    return repeat.call(this, count);
} }.repeat);
const padGuard = function (s, maxLength, fill) {
    if (Number(maxLength) > maxChars && (fill === undefined || String(fill) !== '') && Number(maxLength) > String(s).length) { stringTooLong(Number(maxLength)); }
};
method(strProto, 'padStart', { padStart(maxLength, fillString) {
    padGuard(this, maxLength, fillString);
    return padStart.call(this, maxLength, fillString);
} }.padStart);
method(strProto, 'padEnd', { padEnd(maxLength, fillString) {
    padGuard(this, maxLength, fillString);
    return padEnd.call(this, maxLength, fillString);
} }.padEnd);
// goja's own loops cannot be interrupted by the time limit: joining an array of 2^32-1 holes
// ran for minutes past it. A long array is joined a slice at a time here, between which the
// limits apply.
const joinSlice = 1 << 20, slice = Array.prototype.slice;
method(Array.prototype, 'join', { join(separator) {
    const n = Number(Object(this).length);
    const sep = separator === undefined ? 1 : String(separator).length;
    if (n > 1 && (n - 1) * sep > maxChars) { stringTooLong((n - 1) * sep); }
    if (!(n > joinSlice)) { return join.call(this, separator); }
    const o = Object(this), s = separator === undefined ? ',' : String(separator);
    let out = join.call(slice.call(o, 0, joinSlice), s);
    for (let i = joinSlice; i < n; i += joinSlice) {
        out += s + join.call(slice.call(o, i, Math.min(n, i + joinSlice)), s);
    }
    return out;
} }.join);
const allocGuard = function (n) {
    if (Number(n) > maxBytes) { throw new RangeError('Array buffer allocation failed'); }
};
// goja spreads and iterates arrays, typed arrays and strings ([...a], f(...a), new Set(a),
// Array.from(a.keys())) and writes an array's elements in JSON.stringify with its own Go loops,
// which neither the time limit nor the memory limit interrupts: [...new Array(1e9)] or
// Math.max(...a) over 1e8 holes ran for minutes past the time limit, and JSON.stringify of an
// array of 4e9 holes ended the process (fatal out of memory). So an iterator over more than
// maxElements elements (the guards' bound, see node.go) is a generator, one call an element
// between which the limits apply; and JSON.stringify asks every array it writes for toJSON,
// whose answer past maxElements elements is node's RangeError. Below the bound nothing changes
// but one call a loop (or an array written).
const maxElements = Math.floor(maxBytes / 16), apply = Reflect.apply, isArray = Array.isArray;
const tooLong = function (n) {
    throw new RangeError('Invalid array length: ' + n + ' elements are more than one operation may go through (' + maxElements + ', see --script-memory)');
};
const slowIter = function* (o, kind) {
    for (let i = 0; i < o.length; i += 1) { yield kind === 1 ? o[i] : kind === 0 ? i : [i, o[i]]; }
};
const slowStringIter = function* (s) {
    for (let i = 0; i < s.length;) {
        const n = s.codePointAt(i) > 0xffff ? 2 : 1;
        yield s.slice(i, i + n);
        i += n;
    }
};
const iterGuard = function (proto, name, kind) {
    const orig = proto[name];
    const fn = { [name]: function () {
        const o = Object(this);
        if (!(o.length > maxElements)) { return apply(orig, this, arguments); }
        return slowIter(o, kind);
    } }[name];
    method(proto, name, fn);
    Object.defineProperty(fn, 'length', { value: 0, configurable: true });
    return fn;
};
const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
[Array.prototype, TypedArrayProto].forEach(function (proto) {
    method(proto, Symbol.iterator, iterGuard(proto, 'values', 1));
    iterGuard(proto, 'keys', 0);
    iterGuard(proto, 'entries', 2);
});
const stringIter = strProto[Symbol.iterator];
method(strProto, Symbol.iterator, { [Symbol.iterator]() {
    const s = String(this);
    if (!(s.length > maxElements)) { return apply(stringIter, s, []); }
    return slowStringIter(s);
} }[Symbol.iterator]);
// replace and replaceAll build their answer in one Go operation: 'x'.repeat(1e6).replace(/x/g,
// 'x'.repeat(1000)) made a string of 1e9 characters 7 s past the time limit, 9 times the memory
// limit. Where the answer may be longer than V8's strings (String::kMaxLength) or than the memory
// limit has bytes (maxChars), the replacement is made by a function, one call a match between
// which the limits apply, which throws node's 'Invalid string length', or the memory limit's
// error, once the answer would be that long; a function given as the replacement is always so
// wrapped (what it answers may be long however short the string).
const replace = strProto.replace, replaceAll = strProto.replaceAll;
// A replacement pattern ($$, $&, $\x60, $', $1..$99, $<name>; anything else is kept as it is)
// is read once a call (parsePattern), and each match's answer is joined from it by goja's own
// join: it was made a character at a time ('$&'.repeat(1000) across 10k matches took seconds).
// parsePattern answers the literal strings between the patterns (lits, one more than the
// patterns), the pattern at each place (at: an index in keys), and the distinct patterns
// (keys: 0 for $&, -1 for $\x60, -2 for $', n for capture n, a string for $<name>) with how
// many times each is used (uses). Which $nn are captures depends on their count, known at the
// first match.
const parsePattern = function (r, ncaps, named) {
    const lits = [], at = [], keys = [], uses = [];
    let lit = '', from = 0, i = r.indexOf('$');
    while (i >= 0 && i + 1 < r.length) {
        const d = r[i + 1];
        let key, used = 2;
        if (d === '$') { key = '$'; } else if (d === '&') { key = 0; } else if (d === '\x60') { key = -1; } else if (d === "'") {
            key = -2;
        } else if (d >= '0' && d <= '9') {
            const e = r[i + 2], nn = Number(d + e), n = Number(d);
            if (e !== undefined && e >= '0' && e <= '9' && nn >= 1 && nn <= ncaps) { key = nn; used = 3; } else if (n >= 1 && n <= ncaps) { key = n; }
        } else if (d === '<' && named) {
            const close = r.indexOf('>', i + 2);
            if (close >= 0) { key = '<' + r.slice(i + 2, close); used = close - i + 1; }
        }
        if (key === undefined) { i = r.indexOf('$', i + 1); continue; } // kept as it is
        lit += r.slice(from, i);
        from = i + used;
        i = r.indexOf('$', from);
        if (key === '$') { lit += '$'; continue; }
        let k = keys.indexOf(key);
        if (k < 0) { k = keys.length; keys[k] = key; uses[k] = 0; }
        uses[k] += 1;
        lits[lits.length] = lit;
        at[at.length] = k;
        lit = '';
    }
    lits[lits.length] = lit + r.slice(from);
    let litLength = 0;
    const out = []; // the literals at the even places, the values of the patterns between
    for (let j = 0; j < lits.length; j += 1) {
        litLength += lits[j].length;
        out[2 * j] = lits[j];
        if (j < at.length) { out[2 * j + 1] = ''; }
    }
    return { lits: lits, at: at, keys: keys, uses: uses, litLength: litLength, out: out, vals: [] };
};
// expand returns the replacement p (parsePattern's) for the match of a (replace's callback's
// arguments: m, the captures, pos, s[, groups]; s at k), throwing 'Invalid string length' before
// it is made when it would take total (the answer's length so far, the match's included) past
// maxChars. One pattern used throughout ('$&' a thousand times) is the join of the literals
// with its value; several are joined from the literals and their values, one each a place.
const expand = function (p, a, k, groups, total) {
    const m = a[0], pos = a[k - 1], s = a[k], keys = p.keys, vals = p.vals;
    let n = p.litLength;
    for (let j = 0; j < keys.length; j += 1) {
        const key = keys[j];
        let v;
        if (key === 0) { v = m; } else if (key === -1) { v = s.slice(0, pos); } else if (key === -2) {
            v = s.slice(pos + m.length);
        } else if (typeof key === 'number') { v = a[key] === undefined ? '' : a[key]; } else {
            v = groups[key.slice(1)];
            v = v === undefined ? '' : String(v);
        }
        vals[j] = v;
        n += v.length * p.uses[j];
        if (total + n - m.length > maxChars) { stringTooLong(total + n - m.length); }
    }
    const lits = p.lits, at = p.at;
    if (keys.length === 0) { return lits[0]; }
    if (keys.length === 1) { return apply(join, lits, [vals[0]]); }
    const out = p.out;
    for (let j = 0; j < at.length; j += 1) { out[2 * j + 1] = vals[at[j]]; }
    return apply(join, out, ['']);
};
// A global RegExp's replace, replaceAll, match and split, and replaceAll of a string, find every
// match in one Go operation before anything else happens, which neither limit can interrupt:
// 'a'.repeat(1 << 24).replace(/a/g, 'bb') kept an inject 2x past the time limit and 8x past the
// memory limit (2 GB for its 16M matches). On a string longer than longString (1M characters,
// less under a lower --script-memory: the Go operation takes up to ~100 bytes a character) they
// go from match to match here instead (exec, or indexOf for a string), between which both
// limits apply, and an answer of more characters than the memory limit has bytes is refused as
// it grows. matchAll's iterator is wrapped in a generator there, so a spread of it
// ([...s.matchAll(re)], a Go loop) goes one match a step. Shorter strings are answered by goja
// as before.
const longString = native.longString > 0 ? native.longString : Math.max(1 << 12, Math.min(1 << 20, Math.floor(maxBytes / 256)));
const RegExpCtor = RegExp, RegExpProto = RegExp.prototype, getProto = Object.getPrototypeOf, hasOwn = Object.prototype.hasOwnProperty;
const mathMax = Math.max, mathMin = Math.min; // as the prelude found them: a script may replace the globals
const regexpExec = RegExpProto.exec, symReplace = Symbol.replace, symMatch = Symbol.match, symSplit = Symbol.split;
const regexpReplace = RegExpProto[symReplace], regexpMatch = RegExpProto[symMatch], regexpSplit = RegExpProto[symSplit];
// goLoops tells whether re is a RegExp whose method sym goja runs as one Go loop (RegExp's own,
// its exec not replaced), which the loops here stand for.
const goLoops = function (re, sym, orig) {
    return re instanceof RegExpCtor && getProto(re) === RegExpProto && RegExpProto.exec === regexpExec && RegExpProto[sym] === orig &&
        !hasOwn.call(re, 'exec') && !hasOwn.call(re, sym) && re.constructor === RegExpCtor;
};
// advance is the index after i in s (a code point's with the u flag, else a code unit's).
const advance = function (s, i, unicode) {
    if (unicode && i + 1 < s.length) {
        const c = s.charCodeAt(i), d = s.charCodeAt(i + 1);
        if (c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) { return i + 2; }
    }
    return i + 1;
};
// replaceLoop is replace or replaceAll of pattern (a global RegExp, whose lastIndex is reset, or
// a string) in s.
const replaceLoop = function (s, pattern, replacement) {
    const fn = typeof replacement === 'function';
    if (!fn) { replacement = String(replacement); }
    const plain = !fn && replacement.indexOf('$') < 0, pieces = [], done = [], str = typeof pattern === 'string';
    const unicode = !str && pattern.unicode, step = str ? mathMax(1, pattern.length) : 0, size = s.length;
    let last = 0, total = size, parts, m, v, pos = str ? s.indexOf(pattern) : 0;
    if (!str) { pattern.lastIndex = 0; }
    for (;;) {
        if (str) {
            if (pos < 0 || pos > size) { break; }
            v = pattern;
        } else {
            m = apply(regexpExec, pattern, [s]);
            if (m === null) { break; }
            v = m[0];
            pos = m.index;
            if (v === '') { pattern.lastIndex = advance(s, pattern.lastIndex, unicode); }
        }
        let piece;
        if (plain) { piece = replacement; } else {
            const a = str ? [v] : apply(slice, m, []);
            const k = a.length + 1, groups = str ? undefined : m.groups;
            a[k - 1] = pos;
            a[k] = s;
            if (groups !== undefined) { a[k + 1] = groups; }
            if (fn) {
                // goja (as the standard) finds every match before the first call: what the
                // function does to lastIndex does not change them
                const at = str ? 0 : pattern.lastIndex;
                piece = String(apply(replacement, undefined, a));
                if (!str) { pattern.lastIndex = at; }
            } else {
                if (parts === undefined) { parts = parsePattern(replacement, k - 2, groups !== undefined); }
                piece = expand(parts, a, k, groups, total);
            }
        }
        total += piece.length - v.length;
        if (total > maxChars) { stringTooLong(total); }
        pieces[pieces.length] = s.slice(last, pos);
        pieces[pieces.length] = piece;
        last = pos + v.length;
        if (pieces.length >= 8192) { // joined as it goes: fewer values for the collector to go through
            done[done.length] = apply(join, pieces, ['']);
            pieces.length = 0;
        }
        if (str) { pos = pos + step > size ? -1 : s.indexOf(pattern, pos + step); }
    }
    if (pieces.length === 0 && done.length === 0) { return s; }
    pieces[pieces.length] = s.slice(last);
    done[done.length] = apply(join, pieces, ['']);
    return apply(join, done, ['']);
};
const matchLoop = function (s, re) {
    const out = [], unicode = re.unicode;
    re.lastIndex = 0;
    for (let m = apply(regexpExec, re, [s]); m !== null; m = apply(regexpExec, re, [s])) {
        const v = m[0];
        out[out.length] = v;
        if (v === '') { re.lastIndex = advance(s, re.lastIndex, unicode); }
    }
    return out.length === 0 ? null : out;
};
// splitLoop is RegExp.prototype[Symbol.split] (ES2023 22.2.6.14) with a global copy of re that
// finds the next place a sticky one would match.
const splitLoop = function (s, re, limit) {
    const lim = limit === undefined ? 4294967295 : limit >>> 0, out = [];
    if (lim === 0) { return out; }
    const flags = String(re.flags);
    const r = new RegExpCtor(re, flags.replace('y', '').replace('g', '') + 'g'), size = s.length;
    let p = 0, q = 0;
    while (q < size) {
        r.lastIndex = q;
        const m = apply(regexpExec, r, [s]);
        if (m === null || m.index >= size) { break; }
        q = m.index;
        const e = mathMin(r.lastIndex, size);
        if (e === p) { q = advance(s, q, r.unicode); continue; }
        out[out.length] = s.slice(p, q);
        if (out.length === lim) { return out; }
        p = e;
        for (let i = 1; i < m.length; i += 1) {
            out[out.length] = m[i];
            if (out.length === lim) { return out; }
        }
        q = p;
    }
    out[out.length] = s.slice(p);
    return out;
};
const strMatch = strProto.match, strMatchAll = strProto.matchAll, strSplit = strProto.split;
method(strProto, 'match', { match(re) {
    if (typeof this === 'string' && this.length > longString && goLoops(re, symMatch, regexpMatch) && re.global) { return matchLoop(this, re); }
    return apply(strMatch, this, arguments);
} }.match);
method(strProto, 'split', { split(separator, limit) {
    if (typeof this === 'string' && this.length > longString && goLoops(separator, symSplit, regexpSplit)) { return splitLoop(this, separator, limit); }
    return apply(strSplit, this, arguments);
} }.split);
const matchAllSteps = function* (it) {
    for (let r = it.next(); !r.done; r = it.next()) { yield r.value; }
};
method(strProto, 'matchAll', { matchAll(re) {
    const it = apply(strMatchAll, this, arguments);
    return typeof this === 'string' && this.length > longString ? matchAllSteps(it) : it;
} }.matchAll);
const replaceGuard = function (name, orig) {
    method(strProto, name, { [name]: function (pattern, replacement) {
        if (this === null || this === undefined) { return apply(orig, this, arguments); }
        if (typeof this === 'string' && this.length > longString) {
            if ((name === 'replaceAll' && typeof pattern === 'string') || (goLoops(pattern, symReplace, regexpReplace) && pattern.global)) {
                return replaceLoop(this, pattern, replacement);
            }
        }
        const fn = typeof replacement === 'function';
        if (!fn) {
            const n = String(this).length, r = String(replacement);
            const each = r.indexOf('$') < 0 ? r.length : r.length * (n + 1);
            if (!((n + 1) * each + n > maxChars)) { return apply(orig, this, arguments); }
            replacement = r;
        }
        const plain = !fn && replacement.indexOf('$') < 0;
        const s = String(this);
        let total = s.length, parts;
        return apply(orig, s, [pattern, function (m) {
            const a = arguments;
            let k = a.length - 1, groups;
            if (typeof a[k] !== 'string') { groups = a[k]; k -= 1; }
            let piece;
            if (plain) { piece = replacement; } else if (fn) { piece = String(apply(replacement, undefined, a)); } else {
                if (parts === undefined) { parts = parsePattern(replacement, k - 2, groups !== undefined); }
                piece = expand(parts, a, k, groups, total);
            }
            total += piece.length - m.length;
            if (total > maxChars) { stringTooLong(total); }
            return piece;
        }]);
    } }[name]);
    Object.defineProperty(strProto[name], 'length', { value: 2, configurable: true });
};
replaceGuard('replace', replace);
replaceGuard('replaceAll', replaceAll);
const arrayToJSON = function toJSON() {
    if (isArray(this) && this.length > maxElements) { tooLong(this.length); }
    return this;
};
method(Array.prototype, 'toJSON', arrayToJSON);
native.arrayToJSON = arrayToJSON;
// JSON.stringify lets a pending interrupt through where it looks up toJSON, on Object.prototype
// (see objectToJSON) and Array.prototype; objects of no prototype (Object.create(null),
// {__proto__: null}) have neither, and stringify of a shared graph of them ran past both
// limits. Without a replacer function, stringify gets native.jsonGuard, which answers each
// value as given until an interrupt is pending, and then an object whose getter lets it
// through; a property list becomes a replacer function that answers objects with the listed
// properties alone (what a property list writes).
const jsonStringify = JSON.stringify, createObject = Object.create;
const listReplacer = function (list) {
    const keys = [];
    for (let i = 0; i < list.length; i += 1) {
        const v = list[i];
        if (typeof v === 'string' || typeof v === 'number' || v instanceof String || v instanceof Number) {
            const k = String(v);
            if (keys.indexOf(k) < 0) { keys.push(k); }
        }
    }
    return function (key, v) {
        if (typeof v !== 'object' || v === null || isArray(v) || v instanceof String || v instanceof Number || v instanceof Boolean) { return v; }
        const o = createObject(null);
        for (let i = 0; i < keys.length; i += 1) { o[keys[i]] = v[keys[i]]; }
        return o;
    };
};
method(JSON, 'stringify', { stringify(value, replacer, space) {
    if (typeof replacer === 'function') { return apply(jsonStringify, JSON, [value, replacer, space]); }
    return apply(jsonStringify, JSON, [value, isArray(replacer) ? listReplacer(replacer) : native.jsonGuard, space]);
} }.stringify);
// JSON.parse makes every value of its text in one Go operation, which neither limit can
// interrupt: a 32 MB text of 16M numbers took an inject 19 s and 860 MB under the 5 s / 256 MiB
// defaults before the watch could stop it. A text long enough to hold more values than the memory
// limit has room for at 32 bytes a value (a value takes 16 bytes in its array or object and more
// of its own) has them counted first (native.jsonValues: its commas, colons, [ and { outside strings,
// and one), and past that room it is refused with the memory limit's error before goja parses it.
const jsonParse = JSON.parse, jsonValueBytes = 32;
method(JSON, 'parse', { parse(text, reviver) {
    if (outOfMemory && typeof text === 'string' && text.length * jsonValueBytes > maxBytes && native.jsonValues(text) * jsonValueBytes > maxBytes) { outOfMemory(); }
    return apply(jsonParse, JSON, arguments);
} }.parse);
const format = native.format;
const console = {};
['log', 'info', 'warn', 'error', 'debug', 'trace'].forEach(function (level) {
    console[level] = function () { native.log(level, format.apply(null, arguments)); };
});
g.console = console;

class Buffer extends Uint8Array {
    toString(enc, start, end) {
        let b = this;
        if (start !== undefined || end !== undefined) {
            b = this.subarray(start || 0, end === undefined ? this.length : end);
        }
        return native.decode(b, enc === undefined ? 'utf8' : String(enc));
    }
    toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
    equals(o) {
        if (!o || this.length !== o.length) { return false; }
        for (let i = 0; i < this.length; i += 1) { if (this[i] !== o[i]) { return false; } }
        return true;
    }
    slice(start, end) { return this.subarray(start, end); }
    write(s, offset, enc) {
        const b = Buffer.from(String(s), enc);
        offset = offset || 0;
        const n = Math.min(b.length, this.length - offset);
        for (let i = 0; i < n; i += 1) { this[offset + i] = b[i]; }
        return n;
    }
}
Buffer.from = function (v, enc, length) {
    if (typeof v === 'string') {
        return new Buffer(native.encode(v, enc === undefined ? 'utf8' : String(enc)));
    }
    if (v instanceof ArrayBuffer) {
        return new Buffer(v, enc || 0, length === undefined ? v.byteLength - (enc || 0) : length);
    }
    if (v !== null && typeof v === 'object') {
        if (v.type === 'Buffer' && Array.isArray(v.data)) { v = v.data; }
        allocGuard(v.length >>> 0);
        const b = new Buffer(v.length >>> 0);
        for (let i = 0; i < b.length; i += 1) { b[i] = v[i]; }
        return b;
    }
    throw new TypeError('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
};
Buffer.alloc = function (n, fill) {
    allocGuard(n);
    const b = new Buffer(n);
    if (fill !== undefined) { b.fill(typeof fill === 'string' ? fill.charCodeAt(0) : fill); }
    return b;
};
Buffer.allocUnsafe = Buffer.alloc;
Buffer.isBuffer = function (o) { return o instanceof Buffer; };
Buffer.isEncoding = function (e) { return native.isEncoding(String(e)); };
Buffer.byteLength = function (s, enc) {
    return typeof s === 'string' ? native.encode(s, enc === undefined ? 'utf8' : String(enc)).byteLength : s.byteLength;
};
Buffer.concat = function (list, total) {
    if (total === undefined) { total = list.reduce(function (n, b) { return n + b.length; }, 0); }
    allocGuard(total);
    const out = new Buffer(total);
    let pos = 0;
    for (const b of list) {
        for (let i = 0; i < b.length && pos < total; i += 1) { out[pos] = b[i]; pos += 1; }
    }
    return out;
};
g.Buffer = Buffer;
g.atob = function (s) { return native.decode(new Buffer(native.encode(String(s), 'base64')), 'latin1'); };
g.btoa = function (s) { return native.decode(new Buffer(native.encode(String(s), 'latin1')), 'base64'); };

g.process = {
    env: native.env,
    platform: 'linux',
    argv: [],
    version: 'v18.0.0',
    versions: { node: '18.0.0' },
    cwd: native.cwd,
    nextTick: function (fn) {
        const args = Array.prototype.slice.call(arguments, 1);
        Promise.resolve().then(function () { fn.apply(null, args); });
    }
};

const util = {
    format: format,
    inspect: native.inspect,
    isDeepStrictEqual: function (a, b) { return native.inspect(a) === native.inspect(b); }
};
const crypto = {
    createHash: function (alg) {
        const parts = [];
        const h = {
            update: function (d, enc) { parts.push(typeof d === 'string' ? Buffer.from(d, enc) : Buffer.from(d)); return h; },
            digest: function (enc) {
                const out = new Buffer(native.hash(String(alg), Buffer.concat(parts)));
                return enc ? out.toString(enc) : out;
            }
        };
        return h;
    },
    randomBytes: function (n) { return new Buffer(native.randomBytes(n)); },
    randomUUID: native.randomUUID,
    randomInt: function (min, max) {
        if (max === undefined) { max = min; min = 0; }
        return min + Math.floor(Math.random() * (max - min));
    }
};
const querystring = { parse: native.qsParse, stringify: native.qsStringify };
const modules = { util: util, crypto: crypto, buffer: { Buffer: Buffer }, querystring: querystring };
g.require = function (name) {
    name = String(name);
    if (name.indexOf('node:') === 0) { name = name.slice(5); }
    if (Object.prototype.hasOwnProperty.call(modules, name)) { return modules[name]; }
    const e = new Error("Cannot find module '" + name + "'");
    e.code = 'MODULE_NOT_FOUND';
    throw e;
};
return modules;
})`
