package request

import (
	"net"
	"reflect"
	"strings"
	"testing"
)

// shown is what a recorded request shows of r (the journal renders these fields).
type shown struct {
	Method, Path, Body, Data, IP, RequestFrom string
	Query, Headers, Form                      []KV
	BodyMissing, HasForm, TCP                 bool
}

// shownOf copies what r shows (r's memory may serve another request after).
func shownOf(r *Request) shown {
	kvs := func(l []KV) []KV {
		out := []KV{}
		for _, kv := range l {
			out = append(out, KV{strings.Clone(kv.Name), strings.Clone(kv.Value)})
		}
		return out
	}
	c := strings.Clone
	return shown{c(r.Method), c(r.Path), c(r.Body), c(r.Data()), c(r.IP()), c(r.RequestFrom()), kvs(r.Query), kvs(r.HeaderList()), kvs(r.Form),
		r.BodyMissing, r.HasForm, r.TCP}
}

// TestRecordRoundTrip: a request made again from its record shows what the request showed,
// with the headers parsed or not yet, the client's address formatted or not yet, and after the
// request's memory went to the next request (Recycle).
func TestRecordRoundTrip(t *testing.T) {
	raws := []string{
		"GET /health HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /x/../y?q=1&q=2&a=%20b+c HTTP/1.1\r\nHost: h\r\nX-A:  1 \r\nx-a: 2\r\nX-Latin: \xe9t\xe9\r\n\r\n",
		"POST /form HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 11\r\n\r\na=1&b=%E2%82",
		"POST /gz HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"PUT /long HTTP/1.1\r\nHost: h\r\nContent-Length: 300\r\n\r\n" + string(make([]byte, 300)),
	}
	other := ctxFor(t, "DELETE /zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz?z=zzzzzzzzzzzzzzz HTTP/1.1\r\nHost: zzzzzzzzzzzzzzzzzzz\r\nContent-Length: 9\r\n\r\nzzzzzzzzz")
	for _, raw := range raws {
		for _, formatted := range []bool{false, true} {
			r := Acquire()
			FromHTTP(ctxFor(t, raw), r)
			if formatted {
				r.IP()
			}
			rec, addr := r.AppendRecord([]byte("prefix"))
			rec = rec[len("prefix"):]
			if len(rec) != r.RecordLen() {
				t.Fatalf("%q: record of %d bytes, RecordLen %d", raw, len(rec), r.RecordLen())
			}
			if addr != nil {
				t.Fatalf("%q: address %v kept apart: a TCP address belongs in the record", raw, addr)
			}
			want := shownOf(r)
			Recycle(r)
			for range 3 { // the pool may hand r's memory to the next requests
				n := Acquire()
				FromHTTP(other, n)
				n.HeaderList()
				Recycle(n)
			}
			var got Request
			got.FromRecord(rec, addr)
			if g := shownOf(&got); !reflect.DeepEqual(g, want) {
				t.Errorf("%q (formatted %v): from its record\n%+v\nwant\n%+v", raw, formatted, g, want)
			}
		}
	}
	// An address other than TCP's is kept apart, given back to FromRecord.
	ctx := ctxFor(t, raws[1])
	ctx.Init(&ctx.Request, &net.UDPAddr{IP: net.ParseIP("2001:db8::1"), Port: 7000}, nil)
	r := Acquire()
	FromHTTP(ctx, r)
	rec, addr := r.AppendRecord(nil)
	if addr == nil || len(rec) != r.RecordLen() {
		t.Fatalf("udp: address %v, record of %d bytes, RecordLen %d", addr, len(rec), r.RecordLen())
	}
	want := shownOf(r)
	Release(r)
	var fromUDP Request
	fromUDP.FromRecord(rec, addr)
	if g := shownOf(&fromUDP); !reflect.DeepEqual(g, want) || g.RequestFrom != "2001:db8::1:7000" {
		t.Errorf("udp: from its record\n%+v\nwant\n%+v", g, want)
	}

	tcp := (&Request{TCP: true}).SetDataText("aGVsbG8=")
	tcp.SetClient("::1", "[::1]:7")
	rec, addr = tcp.AppendRecord(nil)
	var got Request
	got.FromRecord(rec, addr)
	if g, w := shownOf(&got), shownOf(tcp); !reflect.DeepEqual(g, w) {
		t.Errorf("tcp: from its record %+v, want %+v", g, w)
	}
}
