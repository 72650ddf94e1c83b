package script

import (
	"bytes"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// installNode adds what Mountebank's scripts use of node beyond the base prelude: the rest of
// Buffer's methods, events, timers objects, and the client side of net, http and https (on the
// call's event loop, loop.go) and synchronous fs. modules is the base prelude's module table,
// which require reads.
func (rt *runtime) installNode(g, native *goja.Object, modules goja.Value) {
	rt.socketNatives(native)
	rt.httpNatives(native)
	rt.fsNatives(native)
	rt.rawUint8Array, _ = goja.AssertConstructor(g.Get("Uint8Array"))
	installGuards(rt.vm, g, native)
	v, err := rt.vm.RunProgram(nodePrelude())
	if err != nil {
		panic("BUG: node prelude: " + err.Error())
	}
	fn, _ := goja.AssertFunction(v)
	if _, err := fn(goja.Undefined(), g, native, modules); err != nil {
		panic("BUG: node prelude: " + err.Error())
	}
	rt.installInspect(g, native, modules)
	if b, ok := g.Get("Buffer").(*goja.Object); ok {
		rt.bufferProto, _ = b.Get("prototype").(*goja.Object)
	}
}

// newBuffer returns a Buffer holding a copy of b. Once node's additions are installed, it is
// goja's Uint8Array given Buffer.prototype, as new Buffer(arrayBuffer) makes it: the checked
// constructors (guardSource) cost ~26 allocations a call, and b's size is mockd's to bound.
func (rt *runtime) newBuffer(b []byte) goja.Value {
	ab := rt.vm.ToValue(rt.vm.NewArrayBuffer(append([]byte(nil), b...)))
	if rt.rawUint8Array != nil && rt.bufferProto != nil {
		o, err := rt.rawUint8Array(nil, ab)
		if err != nil {
			panic("BUG: new Uint8Array: " + err.Error())
		}
		if err := o.SetPrototype(rt.bufferProto); err != nil {
			panic("BUG: Buffer prototype: " + err.Error())
		}
		return o
	}
	ctor, _ := goja.AssertConstructor(rt.vm.Get("Buffer"))
	v, err := ctor(nil, ab)
	if err != nil {
		panic("BUG: new Buffer: " + err.Error())
	}
	return v
}

// httpNatives are the functions the prelude's ClientRequest calls.
func (rt *runtime) httpNatives(native *goja.Object) {
	_ = native.Set("httpRequest", func(spec *goja.Object, body goja.Value, handler goja.Value) int64 {
		str := func(k string) string { return spec.Get(k).String() }
		s := httpSpec{
			Protocol: str("protocol"), Host: str("host"), Port: int(spec.Get("port").ToInteger()),
			Method: str("method"), Path: str("path"), Chunked: spec.Get("chunked").ToBoolean(),
			RejectUnauthorized: spec.Get("rejectUnauthorized").ToBoolean(),
			CA:                 str("ca"), Cert: str("cert"), Key: str("key"), Servername: str("servername"),
		}
		_ = rt.vm.ExportTo(spec.Get("headers"), &s.Headers)
		fn, ok := goja.AssertFunction(handler)
		if !ok {
			panic(rt.vm.NewTypeError("BUG: httpRequest needs a function"))
		}
		b, _ := body.Export().([]byte)
		return rt.httpRequest(&s, append([]byte(nil), b...), fn)
	})
	_ = native.Set("bytesIndex", func(hay, needle goja.Value, from int, last bool) int {
		h, _ := hay.Export().([]byte)
		n, _ := needle.Export().([]byte)
		if last {
			end := min(max(from, -1)+len(n), len(h))
			if end < 0 {
				return -1
			}
			return bytes.LastIndex(h[:end], n)
		}
		if from > len(h) {
			return -1
		}
		if i := bytes.Index(h[from:], n); i >= 0 {
			return from + i
		}
		return -1
	})
	_ = native.Set("bytesCompare", func(a, b goja.Value) int {
		x, _ := a.Export().([]byte)
		y, _ := b.Export().([]byte)
		return bytes.Compare(x, y)
	})
	_ = native.Set("httpAbort", func(id int64) {
		if rt.ioc != nil {
			if cancel := rt.ioc.aborts[id]; cancel != nil {
				cancel()
			}
		}
	})
}

// installGuards bounds what one built-in of vm may make or go through (guardSource); native
// must hold maxBytes.
func installGuards(vm *goja.Runtime, g, native *goja.Object) {
	_ = native.Set("count", strings.Count) // split's guard: the pieces of a long string
	v, err := vm.RunProgram(guardProgram())
	if err != nil {
		panic("BUG: guards: " + err.Error())
	}
	fn, _ := goja.AssertFunction(v)
	if _, err := fn(goja.Undefined(), g, native); err != nil {
		panic("BUG: guards: " + err.Error())
	}
}

var guardProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("guards.js", guardSource, true)
})

// guardSource is a function expression called with the global object and the Go natives.
const guardSource = `(function (g, native) {
'use strict';
// goja's built-ins are Go loops that neither the time limit nor the memory limit interrupts,
// and they ask the Go runtime at once for what they make: new ArrayBuffer(1e11) or
// new Uint8Array(1e11) ended the process (the Go runtime cannot recover from running out of
// memory), new Array(1e9).fill(0), Array.from({length: 1e9}) or [].concat(new Array(1e9)) took
// all the machine's memory or minutes past the time limit. So a typed array or ArrayBuffer is at
// most maxBytes bytes ('Array buffer allocation failed', V8's error when the memory is not
// there), and an Array method, Array.from, a typed array's from, apply, Reflect.apply and
// Reflect.construct, and String split go through at most maxElements elements (16 bytes a goja
// value): past them node's 'Invalid array length' RangeError is thrown before goja is asked.
// The constructors are replaced by functions that check and then construct with the original:
// they share its prototype (instanceof, subclasses and species work as before, and the arrays
// goja makes itself have the same prototype); Buffer extends the checked one. They come with node's
// additions (installNode) because a runtime with them is four times the size, and run in the
// runtime of an EJS config template.
const slice = Array.prototype.slice, maxBytes = native.maxBytes, strProto = String.prototype;
const method = function (proto, name, fn) {
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
};
const maxElements = Math.floor(maxBytes / 16);
const tooLong = function (n) {
    throw new RangeError('Invalid array length: ' + n + ' elements are more than one operation may go through (' + maxElements + ', see --script-memory)');
};
const bufferTooLarge = function () { throw new RangeError('Array buffer allocation failed'); };
const construct = Reflect.construct, apply = Reflect.apply, isArray = Array.isArray, getProto = Object.getPrototypeOf;
const lengthOf = function (o) {
    if (o === null || o === undefined) { return 0; }
    const n = Number(typeof o === 'string' ? o.length : Object(o).length);
    return n > 0 ? n : 0;
};
const TypedArray = getProto(Uint8Array), isView = ArrayBuffer.isView;
const guardCtor = function (name, bytes) {
    const Orig = g[name];
    const check = { [name]: function () {
        if (new.target === undefined) { throw new TypeError("Constructor " + name + " requires 'new'"); }
        let a = arguments[0];
        if (a !== null && typeof a === 'object' && bytes !== 0 && !(a instanceof ArrayBuffer) && !isView(a)) {
            // an array-like or iterable: its length read once (a getter cannot answer 1 here
            // and 1e11 to goja)
            const n = lengthOf(a);
            if (n > maxElements) { tooLong(n); }
            if (!isArray(a) && typeof a[Symbol.iterator] !== 'function') {
                const args = slice.call(arguments);
                args[0] = slice.call(a, 0, n);
                return construct(Orig, args, new.target);
            }
        } else if (arguments.length > 0 && (typeof a !== 'object' || (bytes === 0 && a !== null))) {
            // a length, converted once (valueOf runs once, as in goja)
            a = typeof a === 'bigint' || typeof a === 'symbol' ? a : Number(a);
            if (a * (bytes || 1) > maxBytes) { bufferTooLarge(); }
            const args = slice.call(arguments);
            args[0] = a;
            return construct(Orig, args, new.target);
        }
        return construct(Orig, arguments, new.target);
    } }[name];
    Object.setPrototypeOf(check, getProto(Orig));
    for (const k of Reflect.ownKeys(Orig)) {
        if (k !== 'prototype') { Object.defineProperty(check, k, Object.getOwnPropertyDescriptor(Orig, k)); }
    }
    Object.defineProperty(check, 'prototype', { value: Orig.prototype, writable: false, enumerable: false, configurable: false });
    Object.defineProperty(Orig.prototype, 'constructor', { value: check, writable: true, enumerable: false, configurable: true });
    Object.defineProperty(g, name, { value: check, writable: true, enumerable: false, configurable: true });
};
guardCtor('ArrayBuffer', 0);
['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
    'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'].forEach(function (name) {
    if (typeof g[name] === 'function') { guardCtor(name, g[name].BYTES_PER_ELEMENT); }
});
const guardMethod = function (obj, name, count) {
    const orig = obj[name];
    if (typeof orig !== 'function') { return; }
    method(obj, name, { [name]: function () {
        const n = count(this, arguments);
        if (n > maxElements) { tooLong(n); }
        return apply(orig, this, arguments);
    } }[name]);
    Object.defineProperty(obj[name], 'length', { value: orig.length, configurable: true });
};
const thisLength = function (o) { return lengthOf(o); };
['concat', 'copyWithin', 'every', 'fill', 'filter', 'find', 'findIndex', 'findLast', 'findLastIndex', 'flat',
    'flatMap', 'forEach', 'includes', 'indexOf', 'lastIndexOf', 'map', 'reduce', 'reduceRight', 'reverse', 'shift',
    'slice', 'some', 'sort', 'splice', 'toLocaleString', 'toReversed', 'toSorted', 'toSpliced', 'unshift', 'with'].forEach(function (name) {
    guardMethod(Array.prototype, name, name !== 'concat' ? thisLength : function (o, args) {
        let n = lengthOf(o);
        for (let i = 0; i < args.length; i += 1) { n += isArray(args[i]) ? args[i].length : 1; }
        return n;
    });
});
const secondLength = function (o, args) { return lengthOf(args[1]); };
guardMethod(Array, 'from', function (o, args) { return lengthOf(args[0]); });
guardMethod(TypedArray, 'from', function (o, args) { return lengthOf(args[0]); });
guardMethod(Function.prototype, 'apply', secondLength);
guardMethod(Reflect, 'apply', function (o, args) { return lengthOf(args[2]); });
guardMethod(Reflect, 'construct', secondLength);
// Array.from of an array-like (no iterator) and fill of an array go through it in one Go loop,
// bounded by maxElements only: Array.from({length: 15 << 20}) took an inject 45 s and 1 GB, and
// new Array(15 << 20).fill(x) 12 s and 830 MB, under the 5 s / 256 MiB defaults. Past
// chunkElements elements Array.from goes an element at a time here, and fill a chunk at a time,
// between which the limits apply.
const chunkElements = native.chunkElements > 0 ? native.chunkElements : 1 << 20, arrayFrom = Array.from, arrayFill = Array.prototype.fill, toInt = Math.trunc;
method(Array, 'from', { from(items, mapFn, thisArg) {
    if (this !== Array || items === null || items === undefined || typeof items === 'string' || typeof items[Symbol.iterator] === 'function') {
        return apply(arrayFrom, this, arguments);
    }
    if (mapFn !== undefined && typeof mapFn !== 'function') { return apply(arrayFrom, this, arguments); } // goja's TypeError
    const o = Object(items), n = lengthOf(o);
    if (!(n > chunkElements)) { return apply(arrayFrom, this, [o, mapFn, thisArg]); }
    if (n > maxElements) { tooLong(n); }
    const out = [];
    for (let k = 0; k < n; k += 1) { out[k] = mapFn === undefined ? o[k] : apply(mapFn, thisArg, [o[k], k]); }
    return out;
} }.from);
Object.defineProperty(Array.from, 'length', { value: 1, configurable: true });
method(Array.prototype, 'fill', { fill(value, start, end) {
    const o = Object(this), n = lengthOf(o);
    if (!(n > chunkElements) || !isArray(o)) { return apply(arrayFill, this, arguments); }
    const rel = function (v, dflt) {
        const i = v === undefined ? dflt : toInt(Number(v)) || 0;
        return i < 0 ? Math.max(n + i, 0) : Math.min(i, n);
    };
    const to = rel(end, n);
    for (let k = rel(start, 0); k < to; k += chunkElements) { apply(arrayFill, o, [value, k, Math.min(to, k + chunkElements)]); }
    return o;
} }.fill);
Object.defineProperty(Array.prototype.fill, 'length', { value: 1, configurable: true });
guardMethod(strProto, 'split', function (o, args) {
    // one piece a character at most, or one a separator (counted in Go) and one more
    if (args[1] !== undefined || args[0] === undefined || args[0] === null) { return 0; }
    const s = String(o);
    if (!(s.length > maxElements)) { return s.length; }
    return typeof args[0] === 'string' && args[0] !== '' ? native.count(s, args[0]) + 1 : s.length;
});
})
`

var nodePrelude = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("node.js", nodePreludeSource, true)
})

// nodePreludeSource is a function expression called once per runtime with the global object,
// the Go natives and the module table.
const nodePreludeSource = `(function (g, native, modules) {
'use strict';
Object.setPrototypeOf(g.Buffer, g.Uint8Array); // the checked one (see guardSource)

const Buffer = g.Buffer;
const P = Buffer.prototype;
// A Buffer larger than a call may take is refused before goja is asked for it (see prelude.js).
const allocGuard = function (n) {
    if (Number(n) > native.maxBytes) { throw new RangeError('Array buffer allocation failed'); }
};

// --- Buffer: node's read/write methods, search, compare, copy, fill ---
function typeName(v) {
    if (v === null) { return 'null'; }
    if (typeof v === 'string') { return "type string ('" + v + "')"; }
    if (typeof v === 'object' || typeof v === 'function') { return 'an instance of ' + ((v.constructor && v.constructor.name) || 'Object'); }
    return 'type ' + typeof v + ' (' + String(v) + ')';
}
function codeError(Ctor, code, message) {
    const e = new Ctor(message);
    e.code = code;
    return e;
}
function checkOffset(buf, offset, n) {
    if (offset === undefined) { return 0; }
    if (typeof offset !== 'number') {
        throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "offset" argument must be of type number. Received ' + typeName(offset));
    }
    if (!Number.isInteger(offset)) {
        throw codeError(RangeError, 'ERR_OUT_OF_RANGE', 'The value of "offset" is out of range. It must be an integer. Received ' + offset);
    }
    const max = buf.length - n;
    if (max < 0) { throw codeError(RangeError, 'ERR_BUFFER_OUT_OF_BOUNDS', 'Attempt to access memory outside buffer bounds'); }
    if (offset < 0 || offset > max) {
        throw codeError(RangeError, 'ERR_OUT_OF_RANGE', 'The value of "offset" is out of range. It must be >= 0 and <= ' + max + '. Received ' + offset);
    }
    return offset;
}
function checkValue(value, min, max) {
    if (value < min || value > max) {
        throw codeError(RangeError, 'ERR_OUT_OF_RANGE', 'The value of "value" is out of range. It must be >= ' + min + ' and <= ' + max + '. Received ' + value);
    }
}
function view(b) { return new DataView(b.buffer, b.byteOffset, b.byteLength); }
[['UInt8', 1, 'Uint8'], ['Int8', 1, 'Int8'], ['UInt16', 2, 'Uint16'], ['Int16', 2, 'Int16'],
    ['UInt32', 4, 'Uint32'], ['Int32', 4, 'Int32'], ['Float', 4, 'Float32'], ['Double', 8, 'Float64'],
    ['BigUInt64', 8, 'BigUint64'], ['BigInt64', 8, 'BigInt64']].forEach(function (t) {
    const name = t[0], n = t[1], dv = t[2];
    const integer = name.indexOf('Int') >= 0 && name.indexOf('Big') < 0;
    const unsigned = name.indexOf('UInt') >= 0;
    const min = unsigned ? 0 : -Math.pow(2, 8 * n - 1), max = unsigned ? Math.pow(2, 8 * n) - 1 : Math.pow(2, 8 * n - 1) - 1;
    (n === 1 ? [''] : ['LE', 'BE']).forEach(function (end) {
        const le = end === 'LE';
        const read = function (offset) {
            offset = checkOffset(this, offset, n);
            return view(this)['get' + dv](offset, le);
        };
        const write = function (value, offset) {
            offset = checkOffset(this, offset, n);
            if (dv.indexOf('Big') === 0) {
                if (typeof value !== 'bigint') { throw new TypeError('Cannot mix BigInt and other types, use explicit conversions'); }
            } else {
                value = +value;
                if (integer) { checkValue(value, min, max); }
            }
            view(this)['set' + dv](offset, value, le);
            return offset + n;
        };
        P['read' + name + end] = read;
        P['write' + name + end] = write;
        if (unsigned) {
            P['read' + name.replace('UInt', 'Uint') + end] = read;
            P['write' + name.replace('UInt', 'Uint') + end] = write;
        }
    });
});
function checkByteLength(byteLength) {
    if (!Number.isInteger(byteLength) || byteLength < 1 || byteLength > 6) {
        throw codeError(RangeError, 'ERR_OUT_OF_RANGE', 'The value of "byteLength" is out of range. It must be >= 1 and <= 6. Received ' + byteLength);
    }
}
function readVar(buf, offset, byteLength, le, signed) {
    checkByteLength(byteLength);
    offset = checkOffset(buf, offset, byteLength);
    let v = 0;
    for (let i = 0; i < byteLength; i += 1) {
        v = v * 256 + buf[offset + (le ? byteLength - 1 - i : i)];
    }
    if (signed && v >= Math.pow(2, 8 * byteLength - 1)) { v -= Math.pow(2, 8 * byteLength); }
    return v;
}
function writeVar(buf, value, offset, byteLength, le, signed) {
    checkByteLength(byteLength);
    offset = checkOffset(buf, offset, byteLength);
    value = +value;
    const range = Math.pow(2, 8 * byteLength);
    checkValue(value, signed ? -range / 2 : 0, signed ? range / 2 - 1 : range - 1);
    let v = value < 0 ? value + range : value;
    for (let i = 0; i < byteLength; i += 1) {
        buf[offset + (le ? i : byteLength - 1 - i)] = v % 256;
        v = Math.floor(v / 256);
    }
    return offset + byteLength;
}
P.readUIntLE = P.readUintLE = function (o, n) { return readVar(this, o, n, true, false); };
P.readUIntBE = P.readUintBE = function (o, n) { return readVar(this, o, n, false, false); };
P.readIntLE = function (o, n) { return readVar(this, o, n, true, true); };
P.readIntBE = function (o, n) { return readVar(this, o, n, false, true); };
P.writeUIntLE = P.writeUintLE = function (v, o, n) { return writeVar(this, v, o, n, true, false); };
P.writeUIntBE = P.writeUintBE = function (v, o, n) { return writeVar(this, v, o, n, false, false); };
P.writeIntLE = function (v, o, n) { return writeVar(this, v, o, n, true, true); };
P.writeIntBE = function (v, o, n) { return writeVar(this, v, o, n, false, true); };

function needle(value, enc) {
    if (typeof value === 'string') { return Buffer.from(value, enc); }
    if (typeof value === 'number') { return [value & 255]; }
    if (value instanceof Uint8Array) { return value; }
    throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "value" argument must be one of type number or string or an instance of Buffer or Uint8Array. Received ' + typeName(value));
}
function search(buf, value, from, enc, last) {
    if (typeof from === 'string') { enc = from; from = undefined; }
    let n = needle(value, enc);
    if (!(n instanceof Uint8Array)) { n = Buffer.from(n); }
    from = from === undefined ? (last ? buf.length : 0) : Math.trunc(+from) || 0;
    if (from < 0) { from = Math.max(buf.length + from, last ? -1 : 0); }
    if (n.length === 0) { return Math.min(from, buf.length); }
    return native.bytesIndex(buf, n, from, last);
}
P.indexOf = function (value, from, enc) { return search(this, value, from, enc, false); };
P.lastIndexOf = function (value, from, enc) { return search(this, value, from, enc, true); };
P.includes = function (value, from, enc) { return search(this, value, from, enc, false) !== -1; };
function compare(a, b) { return native.bytesCompare(a, b); }
P.equals = function (o) {
    if (!(o instanceof Uint8Array)) {
        throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "otherBuffer" argument must be an instance of Buffer or Uint8Array. Received ' + typeName(o));
    }
    return native.bytesCompare(this, o) === 0;
};
// Whole-array copies go through TypedArray.prototype.set: an indexed loop costs goja a string
// conversion per byte.
const baseFrom = Buffer.from;
Buffer.from = function (v, enc, length) {
    if (ArrayBuffer.isView(v)) {
        const b = new Buffer(v.byteLength);
        b.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
        return b;
    }
    return baseFrom(v, enc, length);
};
Buffer.concat = function (list, total) {
    if (!Array.isArray(list)) {
        throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "list" argument must be an instance of Array. Received ' + typeName(list));
    }
    if (total === undefined) { total = list.reduce(function (n, b) { return n + b.length; }, 0); }
    allocGuard(total);
    const out = new Buffer(total);
    let pos = 0;
    for (const b of list) {
        if (pos >= total) { break; }
        const part = b.length > total - pos ? b.subarray(0, total - pos) : b;
        out.set(part, pos);
        pos += part.length;
    }
    return out;
};
P.compare = function (target, ts, te, ss, se) {
    return compare(this.subarray(ss || 0, se === undefined ? this.length : se), target.subarray(ts || 0, te === undefined ? target.length : te));
};
Buffer.compare = compare;
P.copy = function (target, targetStart, sourceStart, sourceEnd) {
    targetStart = targetStart || 0;
    const src = this.subarray(sourceStart || 0, sourceEnd === undefined ? this.length : sourceEnd);
    const n = Math.max(0, Math.min(src.length, target.length - targetStart));
    target.set(src.subarray(0, n), targetStart);
    return n;
};
const fillBytes = Uint8Array.prototype.fill;
P.fill = function (value, offset, end, enc) {
    if (typeof offset === 'string') { enc = offset; offset = undefined; end = undefined; }
    if (typeof end === 'string') { enc = end; end = undefined; }
    offset = offset === undefined ? 0 : offset;
    end = end === undefined ? this.length : end;
    if (typeof value === 'number' || typeof value === 'boolean') { return fillBytes.call(this, value & 255, offset, end); }
    const bytes = typeof value === 'string' ? Buffer.from(value, enc) : value;
    if (bytes.length === 0) { return fillBytes.call(this, 0, offset, end); }
    for (let i = offset, j = 0; i < end; i += 1, j = (j + 1) % bytes.length) { this[i] = bytes[j]; }
    return this;
};
Buffer.alloc = function (n, fill, enc) {
    allocGuard(n);
    const b = new Buffer(n);
    if (fill !== undefined && fill !== 0) { b.fill(fill, enc); }
    return b;
};
Buffer.allocUnsafe = Buffer.allocUnsafeSlow = function (n) { allocGuard(n); return new Buffer(n); };
Buffer.poolSize = 8192;
P.toLocaleString = P.toString;
P.inspect = function () { return '<Buffer ' + Array.from(this.subarray(0, 50), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join(' ') + (this.length > 50 ? ' ... ' + (this.length - 50) + ' more bytes' : '') + '>'; };

// toBuffer returns data (a string in enc, a Buffer, a typed array or an ArrayBuffer) as a Buffer.
function toBuffer(data, enc) {
    if (typeof data === 'string') { return Buffer.from(data, enc); }
    if (data instanceof Buffer) { return data; }
    if (ArrayBuffer.isView(data)) { return new Buffer(data.buffer, data.byteOffset, data.byteLength); }
    if (data instanceof ArrayBuffer) { return new Buffer(data); }
    throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "chunk" argument must be of type string or an instance of Buffer or Uint8Array. Received ' + typeName(data));
}

// decoder turns chunks into strings in enc, keeping a UTF-8 sequence split across chunks whole.
function decoder(enc) {
    let carry = null;
    return function (chunk) {
        if (!enc) { return chunk; }
        if (!/^utf-?8$/i.test(enc)) { return chunk.toString(enc); }
        let b = carry ? Buffer.concat([carry, chunk]) : chunk;
        carry = null;
        let cut = b.length;
        for (let i = b.length - 1; i >= 0 && i >= b.length - 3; i -= 1) {
            const c = b[i];
            if ((c & 0xc0) === 0x80) { continue; }
            const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
            if (b.length - i < need) { cut = i; }
            break;
        }
        if (cut < b.length) {
            carry = Buffer.from(b.subarray(cut));
            b = b.subarray(0, cut);
        }
        return b.toString('utf8');
    };
}

// --- events ---
const kEvents = Symbol('events');
function events(e) {
    if (!Object.prototype.hasOwnProperty.call(e, kEvents)) {
        Object.defineProperty(e, kEvents, { value: {}, writable: true });
    }
    return e[kEvents];
}
function checkListener(fn) {
    if (typeof fn !== 'function') {
        throw codeError(TypeError, 'ERR_INVALID_ARG_TYPE', 'The "listener" argument must be of type function. Received ' + typeName(fn));
    }
}
class EventEmitter {
    on(name, fn) { return this.addListener(name, fn); }
    addListener(name, fn) {
        checkListener(fn);
        const ev = events(this);
        if (ev.newListener) { this.emit('newListener', name, fn); }
        (ev[name] = ev[name] || []).push(fn);
        return this;
    }
    prependListener(name, fn) {
        checkListener(fn);
        const ev = events(this);
        (ev[name] = ev[name] || []).unshift(fn);
        return this;
    }
    once(name, fn) { checkListener(fn); return this.on(name, onceWrapper(this, name, fn)); }
    prependOnceListener(name, fn) { checkListener(fn); return this.prependListener(name, onceWrapper(this, name, fn)); }
    off(name, fn) { return this.removeListener(name, fn); }
    removeListener(name, fn) {
        const list = events(this)[name];
        if (list) {
            for (let i = list.length - 1; i >= 0; i -= 1) {
                if (list[i] === fn || list[i].listener === fn) { list.splice(i, 1); break; }
            }
        }
        return this;
    }
    removeAllListeners(name) {
        if (name === undefined) { this[kEvents] = {}; } else { delete events(this)[name]; }
        return this;
    }
    emit(name) {
        const list = events(this)[name];
        const args = Array.prototype.slice.call(arguments, 1);
        if (!list || list.length === 0) {
            if (name === 'error') {
                const err = args[0];
                if (err instanceof Error) { throw err; }
                throw codeError(Error, 'ERR_UNHANDLED_ERROR', 'Unhandled error. (' + String(err) + ')');
            }
            return false;
        }
        for (const fn of list.slice()) { fn.apply(this, args); }
        return true;
    }
    listeners(name) { return (events(this)[name] || []).map(function (fn) { return fn.listener || fn; }); }
    rawListeners(name) { return (events(this)[name] || []).slice(); }
    listenerCount(name) { return (events(this)[name] || []).length; }
    eventNames() { return Object.keys(events(this)).filter(function (k) { return events(this)[k].length > 0; }, this); }
    setMaxListeners() { return this; }
    getMaxListeners() { return 10; }
}
function onceWrapper(target, name, fn) {
    const w = function () {
        target.removeListener(name, w);
        return fn.apply(this, arguments);
    };
    w.listener = fn;
    return w;
}
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.defaultMaxListeners = 10;
EventEmitter.once = function (emitter, name) {
    return new Promise(function (resolve, reject) {
        emitter.once(name, function () { resolve(Array.prototype.slice.call(arguments)); });
        if (name !== 'error') { emitter.once('error', reject); }
    });
};

// --- timers: node returns Timeout objects, which clearTimeout and numbers both accept ---
class Timeout {
    constructor(id) { Object.defineProperty(this, 'id', { value: id }); }
    ref() { return this; }
    unref() { return this; }
    hasRef() { return true; }
    refresh() { return this; }
    [Symbol.toPrimitive]() { return this.id; }
}
const timers = {};
['setTimeout', 'setInterval', 'setImmediate'].forEach(function (name) {
    const set = g[name];
    g[name] = timers[name] = function () { return new Timeout(set.apply(null, arguments)); };
});
['clearTimeout', 'clearInterval', 'clearImmediate'].forEach(function (name) { timers[name] = g[name]; });
function later(fn) {
    if (typeof fn === 'function') { g.process.nextTick(fn); }
}

// The client modules are built on first require: most runtimes never use them.
function buildIO() {
// --- net ---
function netConnectArgs(args) {
    let opts = args[0], cb;
    if (typeof opts !== 'object' || opts === null) {
        opts = { port: args[0] };
        if (typeof args[1] === 'string') { opts.host = args[1]; }
    }
    for (let i = args.length - 1; i >= 0; i -= 1) {
        if (typeof args[i] === 'function') { cb = args[i]; break; }
    }
    return [opts, cb];
}
function checkPort(port) {
    const n = typeof port === 'string' && port.trim() !== '' ? Number(port) : port;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 65535) {
        throw codeError(RangeError, 'ERR_SOCKET_BAD_PORT', 'Port should be >= 0 and < 65536. Received ' + typeName(port) + '.');
    }
    return n;
}
class Socket extends EventEmitter {
    constructor() {
        super();
        Object.defineProperty(this, '_s', { value: { id: 0, decode: decoder(null), idle: 0, timer: null } });
        this.connecting = false;
        this.destroyed = false;
        this.pending = true;
        this.readable = false;
        this.writable = false;
        this.bytesRead = 0;
        this.bytesWritten = 0;
    }
    connect() {
        const a = netConnectArgs(arguments), opts = a[0];
        if (opts.path !== undefined) { throw new Error('mockd scripts cannot connect to a unix socket'); }
        const port = checkPort(opts.port);
        if (a[1]) { this.once('connect', a[1]); }
        this.connecting = true;
        const self = this;
        this._s.id = native.netConnect(String(opts.host || 'localhost'), port, function (event, x, y, z, w) { self._event(event, x, y, z, w); });
        if (opts.timeout) { this.setTimeout(opts.timeout); }
        return this;
    }
    _event(event, a, b, c, d) {
        switch (event) {
        case 'connect':
            this.connecting = false;
            this.pending = false;
            this.readable = this.writable = true;
            this.localAddress = a;
            this.localPort = Number(b);
            this.remoteAddress = c;
            this.remotePort = Number(d);
            this.remoteFamily = c.indexOf(':') >= 0 ? 'IPv6' : 'IPv4';
            this._active();
            this.emit('connect');
            this.emit('ready');
            break;
        case 'data': {
            const chunk = new Buffer(a);
            this.bytesRead += chunk.length;
            this._active();
            this.emit('data', this._s.decode(chunk));
            break;
        }
        case 'end':
            this.readable = false;
            this.emit('end');
            break;
        case 'error':
            this.emit('error', a);
            break;
        case 'close':
            this.connecting = false;
            this.destroyed = true;
            this.readable = this.writable = false;
            this.setTimeout(0);
            this.emit('close', a);
            break;
        }
    }
    _active() {
        const s = this._s;
        if (s.idle > 0) {
            if (s.timer !== null) { g.clearTimeout(s.timer); }
            const self = this;
            s.timer = g.setTimeout(function () { s.timer = null; self.emit('timeout'); }, s.idle);
        }
    }
    write(data, enc, cb) {
        if (typeof enc === 'function') { cb = enc; enc = undefined; }
        const b = toBuffer(data, enc);
        if (this.destroyed) {
            later(function () { if (cb) { cb(codeError(Error, 'ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed')); } });
            return false;
        }
        native.netWrite(this._s.id, b);
        this.bytesWritten += b.length;
        this._active();
        later(cb);
        return true;
    }
    end(data, enc, cb) {
        if (typeof data === 'function') { cb = data; data = undefined; }
        if (typeof enc === 'function') { cb = enc; enc = undefined; }
        if (data !== undefined && data !== null) { this.write(data, enc); }
        this.writable = false;
        native.netEnd(this._s.id);
        later(cb);
        return this;
    }
    destroy(err) {
        if (!this.destroyed) {
            native.netDestroy(this._s.id);
            if (err) { const self = this; later(function () { self.emit('error', err); }); }
        }
        return this;
    }
    destroySoon() { return this.end(); }
    resetAndDestroy() { return this.destroy(); }
    setEncoding(enc) { this._s.decode = decoder(enc); return this; }
    setTimeout(ms, cb) {
        const s = this._s;
        s.idle = ms;
        if (s.timer !== null) { g.clearTimeout(s.timer); s.timer = null; }
        if (cb) { this.once('timeout', cb); }
        if (ms > 0) { this._active(); }
        return this;
    }
    setNoDelay() { return this; }
    setKeepAlive() { return this; }
    ref() { return this; }
    unref() { return this; }
    pause() { return this; }
    resume() { return this; }
    address() { return { address: this.localAddress, family: this.remoteFamily, port: this.localPort }; }
    get readyState() {
        if (this.connecting) { return 'opening'; }
        if (this.readable && this.writable) { return 'open'; }
        if (this.readable) { return 'readOnly'; }
        if (this.writable) { return 'writeOnly'; }
        return 'closed';
    }
}
const netConnect = function () {
    const s = new Socket();
    return s.connect.apply(s, arguments);
};
function isIPv4(s) { return /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(String(s)); }
function isIPv6(s) { s = String(s); return s.indexOf(':') >= 0 && /^[0-9a-fA-F:.]+$/.test(s); }
function noServer() { throw new Error('mockd scripts can open client connections only, not servers'); }
const net = {
    Socket: Socket, Stream: Socket, connect: netConnect, createConnection: netConnect,
    isIP: function (s) { return isIPv4(s) ? 4 : isIPv6(s) ? 6 : 0; }, isIPv4: isIPv4, isIPv6: isIPv6,
    createServer: noServer, Server: noServer
};

// --- http, https ---
const STATUS_CODES = {
    100: 'Continue',
    101: 'Switching Protocols',
    102: 'Processing',
    103: 'Early Hints',
    200: 'OK',
    201: 'Created',
    202: 'Accepted',
    203: 'Non-Authoritative Information',
    204: 'No Content',
    205: 'Reset Content',
    206: 'Partial Content',
    207: 'Multi-Status',
    208: 'Already Reported',
    226: 'IM Used',
    300: 'Multiple Choices',
    301: 'Moved Permanently',
    302: 'Found',
    303: 'See Other',
    304: 'Not Modified',
    305: 'Use Proxy',
    307: 'Temporary Redirect',
    308: 'Permanent Redirect',
    400: 'Bad Request',
    401: 'Unauthorized',
    402: 'Payment Required',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    406: 'Not Acceptable',
    407: 'Proxy Authentication Required',
    408: 'Request Timeout',
    409: 'Conflict',
    410: 'Gone',
    411: 'Length Required',
    412: 'Precondition Failed',
    413: 'Payload Too Large',
    414: 'URI Too Long',
    415: 'Unsupported Media Type',
    416: 'Range Not Satisfiable',
    417: 'Expectation Failed',
    418: "I'm a Teapot",
    421: 'Misdirected Request',
    422: 'Unprocessable Entity',
    423: 'Locked',
    424: 'Failed Dependency',
    425: 'Too Early',
    426: 'Upgrade Required',
    428: 'Precondition Required',
    429: 'Too Many Requests',
    431: 'Request Header Fields Too Large',
    451: 'Unavailable For Legal Reasons',
    500: 'Internal Server Error',
    501: 'Not Implemented',
    502: 'Bad Gateway',
    503: 'Service Unavailable',
    504: 'Gateway Timeout',
    505: 'HTTP Version Not Supported',
    506: 'Variant Also Negotiates',
    507: 'Insufficient Storage',
    508: 'Loop Detected',
    509: 'Bandwidth Limit Exceeded',
    510: 'Not Extended',
    511: 'Network Authentication Required'
};
const METHODS = ['ACL', 'BIND', 'CHECKOUT', 'CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE',
    'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MOVE', 'NOTIFY', 'OPTIONS', 'PATCH', 'POST', 'PROPFIND', 'PROPPATCH', 'PURGE', 'PUT',
    'QUERY', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'TRACE', 'UNBIND', 'UNLINK', 'UNLOCK', 'UNSUBSCRIBE'];
function parseURL(s) {
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:)\/\/(?:([^@/?#]*)@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([^#]*)/.exec(s);
    if (!m) { throw codeError(TypeError, 'ERR_INVALID_URL', 'Invalid URL'); }
    const out = { protocol: m[1].toLowerCase(), hostname: m[3].replace(/^\[|\]$/g, ''), path: m[5] || '/' };
    if (out.path[0] !== '/') { out.path = '/' + out.path; }
    if (m[4]) { out.port = Number(m[4]); }
    if (m[2]) { out.auth = decodeURIComponent(m[2]); }
    return out;
}
// Response headers joined as node's IncomingMessage joins them.
const firstOnly = ['content-type', 'content-length', 'user-agent', 'referer', 'host', 'authorization', 'proxy-authorization',
    'if-modified-since', 'if-unmodified-since', 'from', 'location', 'max-forwards', 'retry-after', 'etag', 'last-modified',
    'server', 'age', 'expires'];
function joinHeaders(raw) {
    const h = {};
    for (let i = 0; i + 1 < raw.length; i += 2) {
        const k = raw[i].toLowerCase(), v = raw[i + 1];
        if (k === 'set-cookie') {
            (h[k] = h[k] || []).push(v);
        } else if (!(k in h)) {
            h[k] = v;
        } else if (firstOnly.indexOf(k) < 0) {
            h[k] += (k === 'cookie' ? '; ' : ', ') + v;
        }
    }
    return h;
}
class IncomingMessage extends EventEmitter {
    constructor(status, message, version, raw) {
        super();
        Object.defineProperty(this, '_r', { value: { decode: decoder(null), queue: [], flowing: false } });
        this.statusCode = status;
        this.statusMessage = message;
        this.httpVersion = version;
        this.httpVersionMajor = Number(version.split('.')[0]);
        this.httpVersionMinor = Number(version.split('.')[1]);
        this.rawHeaders = raw;
        this.headers = joinHeaders(raw);
        this.trailers = {};
        this.rawTrailers = [];
        this.complete = false;
        this.aborted = false;
    }
    setEncoding(enc) { this._r.decode = decoder(enc); return this; }
    on(name, fn) {
        super.on(name, fn);
        if (name === 'data') { this.resume(); }
        return this;
    }
    resume() {
        const r = this._r, self = this;
        if (!r.flowing) {
            r.flowing = true;
            later(function () { self._flush(); });
        }
        return this;
    }
    pause() { this._r.flowing = false; return this; }
    isPaused() { return !this._r.flowing; }
    destroy() { return this; }
    _push(event, arg) {
        this._r.queue.push([event, arg]);
        if (this._r.flowing) { this._flush(); }
    }
    _flush() {
        const r = this._r;
        while (r.flowing && r.queue.length > 0) {
            const e = r.queue.shift();
            if (e[0] === 'data') {
                this.emit('data', r.decode(e[1]));
            } else if (e[0] === 'end') {
                this.complete = true;
                this.emit('end');
                this.emit('close');
            } else {
                this.aborted = true;
                this.emit('aborted');
                if (this.listenerCount('error') > 0) { this.emit('error', e[1]); }
                this.emit('close');
            }
        }
    }
}
class ClientRequest extends EventEmitter {
    constructor(protocol, defaultPort, o, cb) {
        super();
        const proto = o.protocol || protocol;
        if (proto !== protocol) {
            throw codeError(TypeError, 'ERR_INVALID_PROTOCOL', 'Protocol "' + proto + '" not supported. Expected "' + protocol + '"');
        }
        const headers = [];
        const given = o.headers || {};
        for (const k of Object.keys(given)) {
            const v = given[k];
            if (v === undefined) { continue; }
            (Array.isArray(v) ? v : [v]).forEach(function (x) { headers.push([k, String(x)]); });
        }
        if (o.auth && !headers.some(function (h) { return h[0].toLowerCase() === 'authorization'; })) {
            headers.push(['Authorization', 'Basic ' + Buffer.from(String(o.auth)).toString('base64')]);
        }
        let host = o.hostname || o.host || 'localhost';
        if (!o.hostname && /^[^:\[\]]*:\d+$/.test(host)) { host = host.replace(/:\d+$/, ''); }
        Object.defineProperty(this, '_q', { value: {
            protocol: proto, defaultPort: defaultPort, host: String(host), port: o.port === undefined || o.port === null || o.port === '' ? defaultPort : checkPort(o.port),
            headers: headers, chunks: [], wrote: false, id: 0, timer: null,
            tls: { rejectUnauthorized: o.rejectUnauthorized !== false, ca: o.ca ? String(o.ca) : '', cert: o.cert ? String(o.cert) : '',
                key: o.key ? String(o.key) : '', servername: o.servername ? String(o.servername) : '' }
        } });
        this.method = String(o.method || 'GET').toUpperCase();
        this.path = String(o.path || '/');
        this.host = this._q.host;
        this.protocol = proto;
        this.finished = false;
        this.aborted = false;
        this.destroyed = false;
        this.res = null;
        if (cb) { this.once('response', cb); }
        if (o.timeout) { this.setTimeout(o.timeout); }
    }
    _find(name) {
        name = String(name).toLowerCase();
        for (let i = 0; i < this._q.headers.length; i += 1) {
            if (this._q.headers[i][0].toLowerCase() === name) { return i; }
        }
        return -1;
    }
    setHeader(name, value) {
        this.removeHeader(name);
        const q = this._q;
        (Array.isArray(value) ? value : [value]).forEach(function (v) { q.headers.push([String(name), String(v)]); });
        return this;
    }
    getHeader(name) {
        const vals = this._q.headers.filter(function (h) { return h[0].toLowerCase() === String(name).toLowerCase(); }).map(function (h) { return h[1]; });
        return vals.length === 0 ? undefined : vals.length === 1 ? vals[0] : vals;
    }
    getHeaders() {
        const out = {};
        for (const h of this._q.headers) { out[h[0].toLowerCase()] = this.getHeader(h[0]); }
        return out;
    }
    getHeaderNames() { return Object.keys(this.getHeaders()); }
    hasHeader(name) { return this._find(name) >= 0; }
    removeHeader(name) {
        for (let i = this._find(name); i >= 0; i = this._find(name)) { this._q.headers.splice(i, 1); }
    }
    write(chunk, enc, cb) {
        if (typeof enc === 'function') { cb = enc; enc = undefined; }
        if (this.finished) {
            const e = codeError(Error, 'ERR_STREAM_WRITE_AFTER_END', 'write after end');
            const self = this;
            later(function () { self.emit('error', e); });
            return false;
        }
        this._q.chunks.push(Buffer.from(toBuffer(chunk, enc)));
        this._q.wrote = true;
        later(cb);
        return true;
    }
    end(chunk, enc, cb) {
        if (typeof chunk === 'function') { cb = chunk; chunk = undefined; }
        if (typeof enc === 'function') { cb = enc; enc = undefined; }
        if (this.finished) { return this; }
        if (chunk !== undefined && chunk !== null) { this._q.chunks.push(Buffer.from(toBuffer(chunk, enc))); }
        this.finished = true;
        const q = this._q, self = this;
        const flat = [];
        q.headers.forEach(function (h) { flat.push(h[0], h[1]); });
        q.id = native.httpRequest({
            protocol: q.protocol, host: q.host, port: q.port, method: this.method, path: this.path, headers: flat,
            chunked: q.wrote && !this.hasHeader('content-length'),
            rejectUnauthorized: q.tls.rejectUnauthorized, ca: q.tls.ca, cert: q.tls.cert, key: q.tls.key, servername: q.tls.servername
        }, Buffer.concat(q.chunks), function (event, a, b, c, d) { self._event(event, a, b, c, d); });
        later(cb);
        this.emit('finish');
        return this;
    }
    _event(event, a, b, c, d) {
        if (this.destroyed) { return; }
        switch (event) {
        case 'response':
            this._clearTimer();
            this.res = new IncomingMessage(a, b, c, d);
            if (!this.emit('response', this.res)) { this.res.resume(); } // node dumps an unread response
            break;
        case 'data':
            this.res._push('data', new Buffer(a));
            break;
        case 'end':
            this.res._push('end');
            this.emit('close');
            break;
        case 'aborted':
            this.res._push('aborted', a);
            this.emit('close');
            break;
        case 'error':
            this._clearTimer();
            this.emit('error', a);
            this.emit('close');
            break;
        }
    }
    _clearTimer() {
        if (this._q.timer !== null) { g.clearTimeout(this._q.timer); this._q.timer = null; }
    }
    setTimeout(ms, cb) {
        if (cb) { this.once('timeout', cb); }
        this._clearTimer();
        if (ms > 0) {
            const self = this;
            this._q.timer = g.setTimeout(function () { self._q.timer = null; self.emit('timeout'); }, ms);
        }
        return this;
    }
    abort() {
        if (!this.aborted) {
            this.aborted = true;
            const self = this;
            later(function () { self.emit('abort'); });
            this.destroy();
        }
    }
    destroy(err) {
        if (this.destroyed) { return this; }
        this.destroyed = true;
        this._clearTimer();
        if (this._q.id) { native.httpAbort(this._q.id); }
        const self = this, res = this.res;
        later(function () {
            if (res && !res.complete) {
                res.aborted = true;
                res.emit('aborted');
                res.emit('close');
            } else if (!res) {
                const e = err || codeError(Error, 'ECONNRESET', 'socket hang up');
                if (self.listenerCount('error') > 0 || err) { self.emit('error', e); }
            }
            self.emit('close');
        });
        return this;
    }
    setNoDelay() { return this; }
    setSocketKeepAlive() { return this; }
    flushHeaders() { }
}
function httpModule(protocol, defaultPort) {
    function request(url, options, cb) {
        let o;
        if (typeof url === 'string' || (url !== null && typeof url === 'object' && typeof url.href === 'string')) {
            o = parseURL(typeof url === 'string' ? url : url.href);
            if (typeof options === 'function') { cb = options; options = undefined; }
            Object.assign(o, options || {});
        } else {
            cb = options;
            o = Object.assign({}, url);
        }
        return new ClientRequest(protocol, defaultPort, o, cb);
    }
    return {
        request: request,
        get: function (url, options, cb) { const r = request(url, options, cb); r.end(); return r; },
        ClientRequest: ClientRequest, IncomingMessage: IncomingMessage,
        Agent: function Agent() { }, globalAgent: {},
        STATUS_CODES: STATUS_CODES, METHODS: METHODS,
        createServer: noServer, Server: noServer
    };
}

// --- fs ---
function encodingOf(options) {
    if (typeof options === 'string') { return options; }
    return options && options.encoding ? options.encoding : null;
}
class Stats {
    constructor(s) {
        this.size = s.size;
        this.mode = s.mode;
        this.mtimeMs = s.mtimeMs;
        this.mtime = new Date(s.mtimeMs);
        Object.defineProperty(this, '_k', { value: s });
    }
    isFile() { return this._k.isFile; }
    isDirectory() { return this._k.isDirectory; }
    isSymbolicLink() { return false; }
}
const fs = {
    readFileSync: function (path, options) {
        const b = new Buffer(native.fsRead(String(path)));
        const enc = encodingOf(options);
        return enc ? b.toString(enc) : b;
    },
    writeFileSync: function (path, data, options) { native.fsWrite(String(path), toBuffer(typeof data === 'string' || ArrayBuffer.isView(data) ? data : String(data), encodingOf(options) || 'utf8'), false); },
    appendFileSync: function (path, data, options) { native.fsWrite(String(path), toBuffer(typeof data === 'string' || ArrayBuffer.isView(data) ? data : String(data), encodingOf(options) || 'utf8'), true); },
    existsSync: function (path) { return native.fsExists(String(path)); },
    readdirSync: function (path) { return native.fsReaddir(String(path)); },
    statSync: function (path) { return new Stats(native.fsStat(String(path))); },
    unlinkSync: function (path) { native.fsUnlink(String(path)); }
};
['readFile', 'writeFile', 'appendFile', 'readdir', 'stat', 'unlink'].forEach(function (name) {
    const sync = fs[name + 'Sync'];
    fs[name] = function () {
        const args = Array.prototype.slice.call(arguments);
        const cb = typeof args[args.length - 1] === 'function' ? args.pop() : null;
        let result, error = null;
        try { result = sync.apply(null, args); } catch (e) { error = e; }
        if (cb) { g.process.nextTick(function () { cb(error, result); }); }
    };
});
fs.exists = function (path, cb) { const r = fs.existsSync(path); g.process.nextTick(function () { cb(r); }); };
fs.promises = {};
['readFile', 'writeFile', 'appendFile', 'readdir', 'stat', 'unlink'].forEach(function (name) {
    const sync = fs[name + 'Sync'];
    fs.promises[name] = function () {
        const args = arguments;
        return new Promise(function (resolve) { resolve(sync.apply(null, args)); });
    };
});

return { net: net, http: httpModule('http:', 80), https: httpModule('https:', 443), fs: fs };
}
let io = null;
modules.events = EventEmitter;
modules.timers = timers;
['net', 'http', 'https', 'fs', 'fs/promises'].forEach(function (name) {
    Object.defineProperty(modules, name, {
        enumerable: true,
        get: function () {
            if (io === null) { io = buildIO(); }
            return name === 'fs/promises' ? io.fs.promises : io[name];
        }
    });
});
modules.buffer.constants = { MAX_LENGTH: 4294967296 };
})`
