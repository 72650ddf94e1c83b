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
const maxString = 536870888;
const maxBytes = native.maxBytes;
const stringLength = function () { throw new RangeError('Invalid string length'); };
const strProto = String.prototype;
const repeat = strProto.repeat, padStart = strProto.padStart, padEnd = strProto.padEnd, join = Array.prototype.join;
const method = function (proto, name, fn) {
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
};
method(strProto, 'repeat', { repeat(count) {
    const n = Math.floor(Number(count));
    if (n > 0 && n < Infinity && String(this).length * n > maxString) { stringLength(); }
    return repeat.call(this, count);
} }.repeat);
const padGuard = function (s, maxLength, fill) {
    if (Number(maxLength) > maxString && (fill === undefined || String(fill) !== '') && Number(maxLength) > String(s).length) { stringLength(); }
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
    if (n > 1 && (n - 1) * sep > maxString) { stringLength(); }
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
