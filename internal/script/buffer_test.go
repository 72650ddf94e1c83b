package script

import (
	"context"
	"testing"
	"time"
)

// evalBody runs expr as the body of an inject response and returns it as text, or the script's
// error message prefixed with "error: ".
func evalBody(t *testing.T, s *Scope, expr string) string {
	t.Helper()
	return respond(t, s, context.Background(), "function (config) { return { body: String("+expr+") }; }")
}

// TestBufferMethods checks the Buffer given to scripts against what node answers for the same
// expressions (node 20).
func TestBufferMethods(t *testing.T) {
	tests := []struct{ expr, want string }{
		// reads
		{`Buffer.from([1, 2, 3, 4]).readUInt32LE(0)`, "67305985"},
		{`Buffer.from([1, 2, 3, 4]).readUInt32BE(0)`, "16909060"},
		{`Buffer.from([1, 2, 3, 4]).readUint32LE()`, "67305985"},
		{`Buffer.from([255, 255, 255, 255]).readInt32LE(0)`, "-1"},
		{`Buffer.from([255, 255, 255, 255]).readUInt32BE(0)`, "4294967295"},
		{`Buffer.from([0, 1, 2]).readUInt16LE(1)`, "513"},
		{`Buffer.from([0, 1, 2]).readUInt16BE(1)`, "258"},
		{`Buffer.from([0x80, 0]).readInt16BE(0)`, "-32768"},
		{`Buffer.from([200]).readUInt8(0)`, "200"},
		{`Buffer.from([200]).readInt8(0)`, "-56"},
		{`Buffer.from([1, 2, 3]).readUIntBE(0, 3)`, "66051"},
		{`Buffer.from([1, 2, 3]).readUIntLE(0, 3)`, "197121"},
		{`Buffer.from([255, 255, 255, 255, 255, 255]).readIntLE(0, 6)`, "-1"},
		{`Buffer.from([0, 0, 0, 0, 0, 0, 0xf0, 0x3f]).readDoubleLE(0)`, "1"},
		{`Buffer.from([0x3f, 0x80, 0, 0]).readFloatBE(0)`, "1"},
		{`Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]).readBigUInt64LE(0)`, "1"},
		{`Buffer.from([255, 255, 255, 255, 255, 255, 255, 255]).readBigInt64BE(0)`, "-1"},
		// writes
		{`(function () { const b = Buffer.alloc(6); return b.writeUInt32LE(0x01020304, 1) + ':' + b.toString('hex'); })()`, "5:000403020100"},
		{`(function () { const b = Buffer.alloc(4); b.writeInt32BE(-2, 0); return b.toString('hex'); })()`, "fffffffe"},
		{`(function () { const b = Buffer.alloc(2); b.writeUInt16BE(258); return b.toString('hex'); })()`, "0102"},
		{`(function () { const b = Buffer.alloc(1); b.writeInt8(-1); return b[0]; })()`, "255"},
		{`(function () { const b = Buffer.alloc(3); return b.writeUIntBE(66051, 0, 3) + ':' + b.toString('hex'); })()`, "3:010203"},
		{`(function () { const b = Buffer.alloc(8); b.writeDoubleBE(1.5); return b.toString('hex'); })()`, "3ff8000000000000"},
		{`(function () { const b = Buffer.alloc(8); b.writeBigUInt64LE(258n); return b.toString('hex'); })()`, "0201000000000000"},
		// range errors, as node's
		{`Buffer.alloc(1).writeUInt8(300)`, `error: The value of "value" is out of range. It must be >= 0 and <= 255. Received 300`},
		{`Buffer.alloc(4).readUInt32LE(1)`, `error: The value of "offset" is out of range. It must be >= 0 and <= 0. Received 1`},
		{`Buffer.alloc(2).readUInt32LE(0)`, `error: Attempt to access memory outside buffer bounds`},
		{`Buffer.alloc(4).readUInt16LE(1.5)`, `error: The value of "offset" is out of range. It must be an integer. Received 1.5`},
		{`Buffer.alloc(4).readUInt16LE('0')`, `error: The "offset" argument must be of type number. Received type string ('0')`},
		{`(function () { try { Buffer.alloc(4).readUInt32LE(2); } catch (e) { return e.code + ' ' + (e instanceof RangeError); } })()`, "ERR_OUT_OF_RANGE true"},
		{`Buffer.alloc(4).readUIntLE(0, 7)`, `error: The value of "byteLength" is out of range. It must be >= 1 and <= 6. Received 7`},
		{`Buffer.alloc(8).writeBigInt64LE(1)`, "error: Cannot mix BigInt and other types, use explicit conversions"},
		// views, encodings, search, compare
		{`Buffer.isBuffer(Buffer.from('hello').slice(1, 3))`, "true"},
		{`Buffer.from('hello').subarray(1, 3).toString()`, "el"},
		{`(function () { const b = Buffer.from('hello'); b.slice(0, 1)[0] = 72; return b.toString(); })()`, "Hello"},
		{`Buffer.from('héllo').toString('hex')`, "68c3a96c6c6f"},
		{`Buffer.from('68c3a96c6c6f', 'hex').toString('utf8')`, "héllo"},
		{`Buffer.from('héllo').toString('base64')`, "aMOpbGxv"},
		{`Buffer.from('héllo', 'latin1').toString('hex')`, "68e96c6c6f"},
		{`Buffer.from([0x68, 0xe9]).toString('binary')`, "hé"},
		{`Buffer.from([0x68, 0xe9]).toString('ascii')`, "hi"},
		{`Buffer.from('héllo').length`, "6"},
		{`Buffer.byteLength('héllo')`, "6"},
		{`Buffer.from('abc').equals(Buffer.from('abc'))`, "true"},
		{`Buffer.from('abc').equals(Buffer.from('abd'))`, "false"},
		{`Buffer.from('hello world').indexOf('o')`, "4"},
		{`Buffer.from('hello world').indexOf('o', 5)`, "7"},
		{`Buffer.from('hello world').indexOf(Buffer.from('wor'))`, "6"},
		{`Buffer.from('hello world').indexOf(111)`, "4"},
		{`Buffer.from('hello world').indexOf('xyz')`, "-1"},
		{`Buffer.from('hello world').lastIndexOf('o')`, "7"},
		{`Buffer.from('hello world').includes('lo w')`, "true"},
		{`Buffer.from('xxhello').subarray(2).indexOf('l')`, "2"},
		{`Buffer.from('abcabc').lastIndexOf('abc', 2)`, "0"},
		{`Buffer.from('abcabc').lastIndexOf('c', -1)`, "5"},
		{`Buffer.from('abcabc').indexOf('c', -2)`, "5"},
		{`Buffer.from('abc').indexOf('')`, "0"},
		{`Buffer.from('abc').equals(new Uint8Array([97, 98, 99]))`, "true"},
		{`Buffer.from(new Uint8Array([1, 2, 3]).subarray(1)).toString('hex')`, "0203"},
		{`Buffer.concat([Buffer.from('ab'), Buffer.from('cd')]).toString()`, "abcd"},
		{`Buffer.concat([Buffer.from('ab'), Buffer.from('cd')], 3).toString()`, "abc"},
		{`Buffer.alloc(5, 'ab').toString()`, "ababa"},
		{`Buffer.alloc(3, 1).toString('hex')`, "010101"},
		{`Buffer.compare(Buffer.from('a'), Buffer.from('b'))`, "-1"},
		{`Buffer.from('b').compare(Buffer.from('a'))`, "1"},
		{`(function () { const t = Buffer.alloc(4); return Buffer.from('xyz').copy(t, 1) + ':' + t.toString('hex'); })()`, "3:0078797a"},
		{`JSON.stringify(Buffer.from('hi'))`, `{"type":"Buffer","data":[104,105]}`},
		{`Buffer.from({ type: 'Buffer', data: [104, 105] }).toString()`, "hi"},
		{`require('buffer').Buffer === Buffer`, "true"},
	}
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range tests {
		if got := evalBody(t, s, tc.expr); got != tc.want {
			t.Errorf("%s\n got %q\nwant %q", tc.expr, got, tc.want)
		}
	}
}

// TestEndOfRequestBinaryBuffer checks that a binary endOfRequestResolver gets a Buffer with
// node's methods, over a request as large as a length-prefixed frame spanning many packets.
func TestEndOfRequestBinaryBuffer(t *testing.T) {
	const resolver = `function (requestData) { return requestData.length >= 4 && requestData.length >= requestData.readUInt32LE(0) + 4; }`
	frame := make([]byte, 4+100000)
	frame[0], frame[1], frame[2] = 0xa0, 0x86, 0x01 // 100000, little-endian
	s := newEngine(t, time.Minute).NewScope(nil)
	for _, tc := range []struct {
		n    int
		want bool
	}{{3, false}, {4, false}, {65536, false}, {len(frame) - 1, false}, {len(frame), true}} {
		got, err := s.EndOfRequest(resolver, frame[:tc.n], true)
		if err != nil || got != tc.want {
			t.Errorf("EndOfRequest(%d bytes) = %v, %v; want %v", tc.n, got, err, tc.want)
		}
	}
	got, err := s.EndOfRequest(`function (requestData) { return typeof requestData + requestData.length; }`, []byte("héllo"), false)
	if err != nil || !got {
		t.Errorf("text mode: %v, %v", got, err)
	}
	// Text is decoded as node decodes it: FF FE is two U+FFFD (Mountebank 2.9.1 resolved this).
	got, err = s.EndOfRequest(`function (d) { return d === '\ufffd\ufffdEND' && d.length === 5; }`, []byte("\xff\xfeEND"), false)
	if err != nil || !got {
		t.Errorf("text mode, invalid UTF-8: %v, %v", got, err)
	}
	// The Buffer mockd makes (goja's Uint8Array given Buffer.prototype, not through the checked
	// constructors) is a Buffer in every way a script can tell.
	const isBuffer = `function (d) {
		const s = d.slice(1);
		return d instanceof Buffer && d instanceof Uint8Array && Buffer.isBuffer(d) && d.constructor === Buffer &&
			Object.getPrototypeOf(d) === Buffer.prototype && d.toString('hex') === '00ff41' && d.length === 3 &&
			s instanceof Buffer && s.toString() === '\ufffdA' && JSON.stringify(d) === '{"type":"Buffer","data":[0,255,65]}' &&
			d.equals(Buffer.from([0, 255, 65])) && d.readUInt16BE(1) === 65345 && new Buffer(2).length === 2;
	}`
	for _, src := range []string{isBuffer, "function (d) { return new ArrayBuffer(8).byteLength === 8 && (" + isBuffer + ")(d); }"} {
		if got, err := s.EndOfRequest(src, []byte{0, 255, 65}, true); err != nil || !got {
			t.Errorf("%s: %v, %v", src, got, err)
		}
	}
}
