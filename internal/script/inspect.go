package script

import (
	"sync"

	"github.com/dop251/goja"
)

// installInspect replaces the base prelude's JSON rendering of objects in console output,
// util.format and util.inspect with node's util.inspect layout (`{ a: 1, b: [ 1, 2 ] }`, single
// quotes, nesting shown to depth 2, lines broken past 80 columns), and makes the logger given to
// scripts format as Mountebank's scoped logger does: String(first argument), then util.format.
func (rt *runtime) installInspect(g, native, modules goja.Value) {
	v, err := rt.vm.RunProgram(inspectPrelude())
	if err != nil {
		panic("BUG: inspect prelude: " + err.Error())
	}
	fn, _ := goja.AssertFunction(v)
	logAt, err := fn(goja.Undefined(), g, native, modules)
	if err != nil {
		panic("BUG: inspect prelude: " + err.Error())
	}
	mk, _ := goja.AssertFunction(logAt)
	for _, level := range []string{"debug", "info", "warn", "error"} {
		f, err := mk(goja.Undefined(), rt.vm.ToValue(level))
		if err != nil {
			panic("BUG: inspect prelude: " + err.Error())
		}
		_ = rt.logger.Set(level, f)
	}
}

var inspectPrelude = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("inspect.js", inspectPreludeSource, true)
})

// inspectPreludeSource is a function expression called once per runtime with the global object,
// the Go natives and the module table; it returns a function that makes the logger's method for
// a level.
const inspectPreludeSource = `(function (g, native, modules) {
'use strict';
const breakLength = 80;
const identifier = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
const meta = ['\\x00', '\\x01', '\\x02', '\\x03', '\\x04', '\\x05', '\\x06', '\\x07', '\\b', '\\t', '\\n', '\\x0B', '\\f', '\\r',
    '\\x0E', '\\x0F', '\\x10', '\\x11', '\\x12', '\\x13', '\\x14', '\\x15', '\\x16', '\\x17', '\\x18', '\\x19', '\\x1A', '\\x1B',
    '\\x1C', '\\x1D', '\\x1E', '\\x1F'];

function quote(s) {
    let q = "'";
    if (s.indexOf("'") >= 0) {
        if (s.indexOf('"') < 0) { q = '"'; } else if (s.indexOf('` + "`" + `') < 0 && s.indexOf('${') < 0) { q = '` + "`" + `'; }
    }
    let out = '';
    for (let i = 0; i < s.length; i += 1) {
        const c = s.charCodeAt(i), ch = s[i];
        if (ch === q || ch === '\\') { out += '\\' + ch; } else if (c < 32) { out += meta[c]; } else if (c === 127) { out += '\\x7F'; } else { out += ch; }
    }
    return q + out + q;
}

function constructorName(o) {
    let p = o;
    while (p !== null) {
        const d = Object.getOwnPropertyDescriptor(p, 'constructor');
        if (d !== undefined && typeof d.value === 'function' && d.value.name !== '') { return d.value.name; }
        p = Object.getPrototypeOf(p);
    }
    return null;
}

function formatPrimitive(v, nested) {
    switch (typeof v) {
    case 'string': return nested ? quote(v) : v;
    case 'number': return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint': return String(v) + 'n';
    case 'symbol': return v.toString();
    default: return String(v);
    }
}

function formatKey(k) {
    if (typeof k === 'symbol') { return '[' + k.toString() + ']'; }
    return identifier.test(k) ? k : quote(k);
}

function isBelowBreakLength(output, start, base) {
    let total = output.length + start;
    if (total + output.length > breakLength) { return false; }
    for (const s of output) {
        total += s.length;
        if (total > breakLength) { return false; }
    }
    return base === '' || base.indexOf('\n') < 0;
}

function groupArrayElements(ctx, output, value) {
    let totalLength = 0, maxLength = 0;
    let outputLength = output.length;
    if (ctx.extraItems) { outputLength -= 1; }
    const separatorSpace = 2;
    const dataLen = [];
    for (let i = 0; i < outputLength; i += 1) {
        const len = output[i].length;
        dataLen.push(len);
        totalLength += len + separatorSpace;
        if (maxLength < len) { maxLength = len; }
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indent < breakLength && (totalLength / actualMax > 5 || maxLength <= 6)) {
        const averageBias = Math.sqrt(actualMax - totalLength / output.length);
        const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
        const columns = Math.min(Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
            Math.floor((breakLength - ctx.indent) / actualMax), 3 * 4, 15);
        if (columns <= 1) { return output; }
        const tmp = [], maxLineLength = [];
        for (let i = 0; i < columns; i += 1) {
            let lineLength = 0;
            for (let j = i; j < output.length; j += columns) {
                if (dataLen[j] > lineLength) { lineLength = dataLen[j]; }
            }
            maxLineLength.push(lineLength + separatorSpace);
        }
        let padStart = true;
        if (value !== undefined) {
            for (let i = 0; i < output.length; i += 1) {
                if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { padStart = false; break; }
            }
        }
        for (let i = 0; i < outputLength; i += columns) {
            const max = Math.min(i + columns, outputLength);
            let str = '';
            let j = i;
            for (; j < max - 1; j += 1) {
                const cell = output[j] + ', ';
                str += padStart ? cell.padStart(maxLineLength[j - i]) : cell.padEnd(maxLineLength[j - i]);
            }
            str += padStart ? output[j].padStart(maxLineLength[j - i] - separatorSpace) : output[j];
            tmp.push(str);
        }
        if (ctx.extraItems) { tmp.push(output[outputLength]); }
        return tmp;
    }
    return output;
}

function reduceToSingleString(ctx, output, base, braces, grouped) {
    if (!grouped) {
        const start = output.length + ctx.indent + braces[0].length + base.length + 10;
        if (isBelowBreakLength(output, start, base)) {
            const joined = output.join(', ');
            if (joined.indexOf('\n') < 0) {
                return (base ? base + ' ' : '') + braces[0] + ' ' + joined + ' ' + braces[1];
            }
        }
    }
    const ind = '\n' + ' '.repeat(ctx.indent);
    return (base ? base + ' ' : '') + braces[0] + ind + '  ' + output.join(',' + ind + '  ') + ind + braces[1];
}

function formatProperty(ctx, o, key, depth, isArrayIndex) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    let str;
    if (d === undefined || 'value' in d) {
        ctx.indent += 2;
        str = formatValue(ctx, d === undefined ? o[key] : d.value, depth + 1, true);
        ctx.indent -= 2;
    } else if (d.get !== undefined) {
        str = d.set !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else {
        str = d.set !== undefined ? '[Setter]' : 'undefined';
    }
    return isArrayIndex ? str : formatKey(key) + ': ' + str;
}

function formatValue(ctx, v, depth, nested) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) { return formatPrimitive(v, nested); }
    if (ctx.seen.indexOf(v) >= 0) {
        ctx.circular = true;
        return '[Circular *1]';
    }
    const name = constructorName(v);
    let base = '', braces, keys = Object.keys(v), output = [], isArray = false;
    let prefix = name === null ? '[Object: null prototype] ' : (name !== 'Object' ? name + ' ' : '');
    if (typeof v === 'function') {
        const fname = v.name ? ': ' + v.name : ' (anonymous)';
        base = /^class\s/.test(Function.prototype.toString.call(v)) ? '[class ' + (v.name || '(anonymous)') + ']' : '[Function' + fname + ']';
        keys = keys.filter(function (k) { return k !== 'prototype'; });
        if (keys.length === 0) { return base; }
        braces = ['{', '}'];
    } else if (Array.isArray(v)) {
        isArray = true;
        braces = [(name !== 'Array' ? prefix + '(' + v.length + ') ' : '') + '[', ']'];
        if (v.length === 0 && keys.length === 0) { return braces[0] + ']'; }
    } else if (v instanceof g.Buffer) {
        return v.inspect();
    } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
        isArray = true;
        braces = [name + '(' + v.length + ') [', ']'];
        if (v.length === 0) { return braces[0] + ']'; }
        keys = [];
    } else if (v instanceof Date) {
        base = isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
        if (keys.length === 0) { return base; }
        braces = ['{', '}'];
    } else if (v instanceof RegExp) {
        base = String(v);
        if (keys.length === 0) { return base; }
        braces = ['{', '}'];
    } else if (v instanceof Error) {
        base = v.stack ? String(v.stack) : String(v);
        if (base.indexOf(String(v)) !== 0) { base = String(v) + '\n' + base; }
        keys = keys.filter(function (k) { return k !== 'stack' && k !== 'message'; });
        if (keys.length === 0) { return base; }
        braces = ['{', '}'];
    } else if (v instanceof Map) {
        braces = [name + '(' + v.size + ') {', '}'];
        if (v.size === 0 && keys.length === 0) { return braces[0] + '}'; }
    } else if (v instanceof Set) {
        braces = [name + '(' + v.size + ') {', '}'];
        if (v.size === 0 && keys.length === 0) { return braces[0] + '}'; }
    } else if (v instanceof Promise) {
        braces = [prefix + '{', '}'];
        output.push('<pending>');
    } else if (v instanceof String || v instanceof Number || v instanceof Boolean) {
        const t = v instanceof String ? 'String' : v instanceof Number ? 'Number' : 'Boolean';
        base = '[' + t + ': ' + formatPrimitive(v.valueOf(), true) + ']';
        keys = keys.filter(function (k) { return !(v instanceof String) || !/^\d+$/.test(k); });
        if (keys.length === 0) { return base; }
        braces = ['{', '}'];
    } else {
        braces = [prefix + '{', '}'];
        if (keys.length === 0) { return prefix + '{}'; }
    }
    if (depth > 2) {
        return '[' + (isArray ? (name || 'Array') : (name || 'Object')) + ']';
    }
    ctx.seen.push(v);
    const saved = ctx.extraItems;
    ctx.extraItems = false;
    if (isArray) {
        const n = Math.min(v.length, 100);
        for (let i = 0; i < n; i += 1) { output.push(formatProperty(ctx, v, i, depth, true)); }
        if (v.length > n) {
            const more = v.length - n;
            output.push('... ' + more + ' more item' + (more > 1 ? 's' : ''));
            ctx.extraItems = true;
        }
        keys = keys.filter(function (k) { return !/^(0|[1-9]\d*)$/.test(k); });
    } else if (v instanceof Map) {
        v.forEach(function (val, k) {
            ctx.indent += 2;
            output.push(formatValue(ctx, k, depth + 1, true) + ' => ' + formatValue(ctx, val, depth + 1, true));
            ctx.indent -= 2;
        });
    } else if (v instanceof Set) {
        v.forEach(function (val) {
            ctx.indent += 2;
            output.push(formatValue(ctx, val, depth + 1, true));
            ctx.indent -= 2;
        });
    }
    for (const k of keys) { output.push(formatProperty(ctx, v, k, depth, false)); }
    ctx.seen.pop();
    let grouped = false;
    if (isArray && output.length > 6) {
        const before = output.length;
        output = groupArrayElements(ctx, output, v);
        grouped = output.length !== before;
    }
    ctx.extraItems = saved;
    return reduceToSingleString(ctx, output, base, braces, grouped);
}

function inspect(v, opts) {
    const ctx = { indent: 0, seen: [], circular: false, extraItems: false };
    const out = formatValue(ctx, v, 0, true);
    return ctx.circular ? '<ref *1> ' + out : out;
}

function inspectShallow(v) {
    // %s on an object: nested objects shown as [Object], as node's depth 0
    const ctx = { indent: 0, seen: [], circular: false, extraItems: false };
    return formatValue(ctx, v, 2, true);
}

function hasBuiltInToString(o) {
    let p = o;
    while (p !== null && p !== undefined) {
        const d = Object.getOwnPropertyDescriptor(p, 'toString');
        if (d !== undefined) {
            return p === Object.prototype || p === Array.prototype || p === Error.prototype || p === Date.prototype ||
                p === RegExp.prototype || p === Function.prototype || p === g.Buffer.prototype || p === Uint8Array.prototype;
        }
        p = Object.getPrototypeOf(p);
    }
    return true;
}

function format() {
    const args = arguments;
    if (args.length === 0) { return ''; }
    const first = args[0];
    let str = '', a = 1;
    if (typeof first !== 'string') {
        a = 0;
    } else if (args.length === 1) {
        return first;
    } else {
        let last = 0;
        for (let i = 0; i < first.length - 1; i += 1) {
            if (first[i] !== '%') { continue; }
            const c = first[i + 1];
            if (c === '%') {
                str += first.slice(last, i) + '%';
                last = i + 2;
                i += 1;
                continue;
            }
            if (a >= args.length || 'sdifjoOc'.indexOf(c) < 0) { continue; }
            const v = args[a];
            let s;
            switch (c) {
            case 's':
                if (typeof v === 'bigint') { s = v + 'n'; } else if (typeof v === 'object' && v !== null) {
                    s = hasBuiltInToString(v) ? inspectShallow(v) : String(v);
                } else if (typeof v === 'symbol') { s = v.toString(); } else { s = formatPrimitive(v, false); }
                break;
            case 'd':
                s = typeof v === 'bigint' ? v + 'n' : typeof v === 'symbol' || (typeof v === 'object' && v !== null) ? 'NaN' : formatPrimitive(Number(v));
                break;
            case 'i':
                s = typeof v === 'bigint' ? v + 'n' : typeof v === 'symbol' ? 'NaN' : formatPrimitive(parseInt(v));
                break;
            case 'f':
                s = typeof v === 'symbol' ? 'NaN' : formatPrimitive(parseFloat(v));
                break;
            case 'j':
                try { s = JSON.stringify(v); } catch (e) { s = '[Circular]'; }
                break;
            case 'c':
                s = '';
                break;
            default:
                s = inspect(v);
            }
            str += first.slice(last, i) + s;
            last = i + 2;
            i += 1;
            a += 1;
        }
        str += first.slice(last);
    }
    for (; a < args.length; a += 1) {
        const v = args[a];
        str += (str === '' && a === 0 ? '' : ' ') + (typeof v === 'string' ? v : inspect(v));
    }
    return str;
}

['log', 'info', 'warn', 'error', 'debug', 'trace'].forEach(function (level) {
    g.console[level] = function () { native.log(level, format.apply(null, arguments)); };
});
g.console.dir = function (v) { native.log('info', inspect(v)); };
modules.util.format = format;
modules.util.inspect = inspect;
modules.util.isDeepStrictEqual = function (a, b) { return inspect(a) === inspect(b); };

// Mountebank's scoped logger: prefix + first argument (so String of it), then util.format.
return function (level) {
    return function () {
        const args = Array.prototype.slice.call(arguments);
        args[0] = String(args[0]);
        native.log(level, format.apply(null, args));
    };
};
})`
