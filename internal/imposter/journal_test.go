package imposter

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/match"
	"github.com/mockd/mockd/internal/request"
)

// TestJournalRing records mixes of requests (records in chunks, objects, no-matches with
// their table and explanation, a client address the record does not hold) into small rings,
// wrapping many times: the journal lists the latest in order with what each was recorded
// with, rendered once, and lets go of the chunks no entry's record is in any more.
func TestJournalRing(t *testing.T) {
	tbl, why := &table{}, &match.Explanation{}
	for _, tt := range []struct {
		name     string
		maxCount int
		total    int
		body     int // bytes of each request's body: larger ones fill a chunk sooner
		every    int // checked after every this many requests
		kind     func(i int) string
	}{
		{"records", 5, 1000, 10, 97, func(int) string { return "record" }},
		{"large records", 3, 200, 20000, 1, func(int) string { return "record" }},
		{"objects", 4, 50, 0, 1, func(int) string { return "object" }},
		{"mixed", 7, 3000, 100, 97, func(i int) string { return []string{"record", "object", "nomatch", "unix"}[i%4] }},
		{"objects between records", 3, 300, 3000, 3, func(i int) string { return []string{"record", "object"}[i%2] }},
		// Chunks of 1, 2, 4... records: the object (2) comes before the last record of chunk 1
		// (3), and chunk 2 begins (4) before the object is the oldest entry (at 5).
		{"an object before a chunk's last record", 4, 300, 3000, 6, func(i int) string { return []string{"record", "record", "object"}[i%3] }},
		{"mostly objects", 6, 500, 300, 5, func(i int) string {
			if i%50 == 0 {
				return "record"
			}
			return "object"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var j journal
			j.init(tt.maxCount, 1<<30)
			for i := range tt.total {
				at := timeZero.Add(timeUnit(i))
				switch tt.kind(i) {
				case "object":
					j.addObject(config.NewObject("path", fmt.Sprintf("/o/%d", i)), at, NoStub, tbl, why)
				default:
					var addr net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
					if tt.kind(i) == "unix" {
						addr = &net.UnixAddr{Name: "/tmp/s", Net: "unix"}
					}
					r := request.Acquire()
					request.FromHTTPLimit(requestCtx(t, fmt.Sprintf("/r/%d", i), strings.Repeat("b", tt.body), addr), r, true, 1<<20)
					stub := 0
					if tt.kind(i) == "nomatch" {
						stub = NoStub
					}
					j.addRequest(r, at, stub, tbl, why)
					request.Release(r)
				}
				if max := 2 + tt.maxCount; len(j.chunks) > max {
					t.Fatalf("after %d requests: %d chunks held for %d entries", i+1, len(j.chunks), j.n)
				}
				if i%tt.every == 0 || i == tt.total-1 {
					checkJournal(t, &j, tt.kind, i+1, tt.maxCount, tt.body, tbl, why)
				}
			}
			// Listed twice: the same rendered objects.
			a, b := j.list(), j.list()
			for i := range a {
				if a[i].req != b[i].req {
					t.Fatalf("entry %d rendered again", i)
				}
			}
		})
	}
}

func timeUnit(i int) time.Duration { return time.Duration(i) * time.Microsecond }

// requestCtx is a POST of body to path from addr, as the http server reads it.
func requestCtx(t *testing.T, path, body string, addr net.Addr) *fasthttp.RequestCtx {
	t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(path)
	req.SetBodyString(body)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, addr, nil)
	return ctx
}

func checkJournal(t *testing.T, j *journal, kind func(int) string, added, maxCount, bodyLen int, tbl *table, why *match.Explanation) {
	t.Helper()
	list := j.list()
	want := min(added, maxCount)
	if len(list) != want {
		t.Fatalf("after %d: %d entries, want %d", added, len(list), want)
	}
	latest := j.latest(2)
	for i, e := range list {
		n := added - want + i
		prefix := "/r/"
		if kind(n) == "object" {
			prefix = "/o/"
		}
		if p, _ := e.req.Get("path"); p != fmt.Sprintf("%s%d", prefix, n) {
			t.Fatalf("after %d: entry %d is %v, want request %d", added, i, p, n)
		}
		if e.at != timeZero.Add(timeUnit(n)).UnixNano() {
			t.Errorf("entry %d: at %d", i, e.at)
		}
		wantTbl := (*table)(nil)
		if kind(n) == "object" || kind(n) == "nomatch" {
			wantTbl = tbl
		}
		if e.tbl != wantTbl || e.why != why { // only a no-match keeps its table
			t.Errorf("entry %d (%s): tbl %p why %p", i, kind(n), e.tbl, e.why)
		}
		if kind(n) != "object" {
			var addr net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
			if kind(n) == "unix" {
				addr = &net.UnixAddr{Name: "/tmp/s", Net: "unix"}
			}
			var r request.Request
			request.FromHTTPLimit(requestCtx(t, "/", "", addr), &r, true, 1<<20)
			if rf, _ := e.req.Get("requestFrom"); rf != r.RequestFrom() {
				t.Errorf("entry %d (%s): requestFrom %q, want %q", i, kind(n), rf, r.RequestFrom())
			}
			if b, _ := e.req.Get("body"); len(b.(string)) != bodyLen {
				t.Errorf("entry %d: body of %d bytes, want %d", i, len(b.(string)), bodyLen)
			}
		}
		if i >= len(list)-len(latest) && latest[len(list)-1-i].req != e.req {
			t.Errorf("latest does not show entry %d as list does", i)
		}
	}
}

// BenchmarkJournalAdd records bench/'s simple request into a full journal (its default
// 100,000 requests): the copy of the request's record, and the oldest entry dropped.
func BenchmarkJournalAdd(b *testing.B) {
	var j journal
	j.init(0, 0)
	r := request.Acquire()
	defer request.Release(r)
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/health")
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept", "*/*")
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
	request.FromHTTPLimit(ctx, r, true, 1<<20)
	at := time.Now()
	for range j.maxCount {
		j.addRequest(r, at, 0, nil, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		j.addRequest(r, at, 0, nil, nil)
	}
}
