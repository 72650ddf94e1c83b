package request

import (
	"encoding/binary"
	"net"
)

// A record is what the journal of recorded requests keeps of a request: its strings copied
// into bytes the journal owns (no pointers for the garbage collector to follow), so that the
// request itself may be recycled. Its layout: one byte of flags, then length-prefixed (uvarint)
// strings: method, path, body, data, the header block when not parsed yet, ip and requestFrom
// when formatted; then query, headers (when parsed) and form, each a count and name/value pairs.

const (
	recBodyMissing = 1 << iota
	recHasForm
	recTCP
	recRawHeaders
	recAddrDone
	recPlainIPv4
	recTCPAddr // the client's address not formatted yet is a *net.TCPAddr, in the record
)

// RecordLen returns how many bytes AppendRecord appends for r.
func (r *Request) RecordLen() int {
	n := 1 + strLen(len(r.Method)) + strLen(len(r.Path)) + strLen(len(r.Body)) + strLen(r.DataLen())
	if r.rawHeaders != nil {
		n += strLen(len(r.rawHeaders))
	}
	if r.addrDone {
		n += strLen(len(r.ip)) + strLen(len(r.requestFrom))
	} else if t, ok := r.addr.(*net.TCPAddr); ok {
		n += strLen(len(t.IP)) + uvarintLen(uint64(t.Port))
	}
	n += kvsLen(r.Query) + kvsLen(r.Form)
	if r.rawHeaders == nil {
		n += kvsLen(r.Headers)
	}
	return n
}

func strLen(n int) int {
	return uvarintLen(uint64(n)) + n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func kvsLen(kvs []KV) int {
	n := uvarintLen(uint64(len(kvs)))
	for _, kv := range kvs {
		n += strLen(len(kv.Name)) + strLen(len(kv.Value))
	}
	return n
}

// AppendRecord appends r's record to b: what Mountebank's recorded request shows of it (see
// FromRecord). The client's address, when not formatted yet and not a TCP address (whose IP and
// port are in the record), is not in it: addr returns it, to be given to FromRecord.
func (r *Request) AppendRecord(b []byte) (out []byte, addr net.Addr) {
	var flags byte
	set := func(on bool, bit byte) {
		if on {
			flags |= bit
		}
	}
	set(r.BodyMissing, recBodyMissing)
	set(r.HasForm, recHasForm)
	set(r.TCP, recTCP)
	set(r.rawHeaders != nil, recRawHeaders)
	set(r.addrDone, recAddrDone)
	set(r.plainIPv4, recPlainIPv4)
	tcpAddr, isTCP := r.addr.(*net.TCPAddr)
	isTCP = isTCP && !r.addrDone && tcpAddr != nil
	set(isTCP, recTCPAddr)
	b = append(b, flags)
	b = appendStr(b, r.Method)
	b = appendStr(b, r.Path)
	b = appendStr(b, r.Body)
	b = appendStr(b, r.Data())
	if r.rawHeaders != nil {
		b = binary.AppendUvarint(b, uint64(len(r.rawHeaders)))
		b = append(b, r.rawHeaders...)
	}
	switch {
	case r.addrDone:
		b = appendStr(b, r.ip)
		b = appendStr(b, r.requestFrom)
	case isTCP:
		b = binary.AppendUvarint(b, uint64(len(tcpAddr.IP)))
		b = append(b, tcpAddr.IP...)
		b = binary.AppendUvarint(b, uint64(tcpAddr.Port))
	default:
		addr = r.addr
	}
	b = appendKVs(b, r.Query)
	if r.rawHeaders == nil {
		b = appendKVs(b, r.Headers)
	}
	b = appendKVs(b, r.Form)
	return b, addr
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendKVs(b []byte, kvs []KV) []byte {
	b = binary.AppendUvarint(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = appendStr(b, kv.Name)
		b = appendStr(b, kv.Value)
	}
	return b
}

// FromRecord makes r the request rec was made of (by AppendRecord, which gave addr), as the
// journal shows it: method, path, query, headers, body, form, data and the client's address.
// r's strings are views of rec, which must never be written again.
func (r *Request) FromRecord(rec []byte, addr net.Addr) {
	r.Reset()
	d := recDecoder{b: rec}
	flags := d.b[0]
	d.b = d.b[1:]
	r.BodyMissing, r.HasForm, r.TCP = flags&recBodyMissing != 0, flags&recHasForm != 0, flags&recTCP != 0
	r.Method, r.Path, r.Body, r.data = d.str(), d.str(), d.str(), d.str()
	if flags&recRawHeaders != 0 {
		r.rawHeaders = d.bytes()
	}
	switch {
	case flags&recAddrDone != 0:
		r.ip, r.requestFrom = d.str(), d.str()
		r.addrDone = true
	case flags&recTCPAddr != 0:
		ip := d.bytes()
		port, k := binary.Uvarint(d.b)
		d.b = d.b[k:]
		r.addr, r.plainIPv4 = &net.TCPAddr{IP: net.IP(ip), Port: int(port)}, flags&recPlainIPv4 != 0
	default:
		r.addr, r.plainIPv4 = addr, flags&recPlainIPv4 != 0
	}
	r.Query = d.kvs(r.Query[:0])
	if r.rawHeaders == nil {
		r.Headers = d.kvs(r.Headers[:0])
	}
	r.Form = d.kvs(r.Form[:0])
}

type recDecoder struct{ b []byte }

func (d *recDecoder) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	s := d.b[k : k+int(n) : k+int(n)]
	d.b = d.b[k+int(n):]
	return s
}

func (d *recDecoder) str() string { return view(d.bytes(), true) }

func (d *recDecoder) kvs(out []KV) []KV {
	n, k := binary.Uvarint(d.b)
	d.b = d.b[k:]
	for range n {
		out = append(out, KV{Name: d.str(), Value: d.str()})
	}
	return out
}
