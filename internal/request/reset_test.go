package request

import (
	"net"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mockd/mockd/internal/config"
)

// TestResetClearsEveryField sets every field of a Request (unexported ones too, and any added
// later) and checks that Reset leaves each one zero but kept, and the four slices empty with
// their memory kept and cleared (nothing they pointed to stays reachable).
func TestResetClearsEveryField(t *testing.T) {
	var r Request
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported too
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(1)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 2, 4)
			for j := range s.Len() {
				e := s.Index(j)
				switch e.Kind() {
				case reflect.Struct: // KV, memoEntry
					if e.Type() == reflect.TypeOf(memoEntry{}) {
						e.Set(reflect.ValueOf(memoEntry{key: 1, val: "v"}))
					} else {
						e.Set(reflect.ValueOf(KV{"n", "v"}))
					}
				case reflect.Uint8:
					e.SetUint('b')
				default:
					t.Fatalf("field %s: a slice of %s: teach this test", v.Type().Field(i).Name, e.Type())
				}
			}
			f.Set(s)
		case reflect.Pointer:
			f.Set(reflect.ValueOf(&config.Object{}))
		case reflect.Struct: // client: the view's client address text, which Reset keeps
			f.Set(reflect.ValueOf(clientText{&net.TCPAddr{Port: 1}, true, "ip", "from"}))
		case reflect.Interface:
			if f.Type() == reflect.TypeOf((*net.Addr)(nil)).Elem() {
				f.Set(reflect.ValueOf(&net.TCPAddr{}))
			} else {
				f.Set(reflect.ValueOf("kept value"))
			}
		default:
			t.Fatalf("field %s of kind %s: teach this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	query, headers, form, memo := r.Query, r.Headers, r.Form, r.memo
	r.Reset()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		f := v.Field(i)
		switch name {
		case "kept":
			if r.kept != "kept value" {
				t.Errorf("kept = %v after Reset, want it kept", r.kept)
			}
		case "client":
			if r.client.addr == nil || r.client.addr.Port != 1 || !r.client.plain || r.client.ip != "ip" || r.client.from != "from" {
				t.Errorf("client = %+v after Reset, want it kept", r.client)
			}
		case "Query", "Headers", "Form", "memo":
			if f.Len() != 0 || f.Cap() != 4 {
				t.Errorf("%s: len %d cap %d after Reset, want 0 and 4", name, f.Len(), f.Cap())
			}
		case "arena":
			if !f.IsZero() {
				t.Errorf("arena not cleared by Reset (Recycle keeps it)")
			}
		default:
			if !f.IsZero() {
				t.Errorf("%s not cleared by Reset", name)
			}
		}
	}
	for j := range 2 {
		if query[j] != (KV{}) || headers[j] != (KV{}) || form[j] != (KV{}) || memo[j] != (memoEntry{}) {
			t.Errorf("element %d of a kept slice not cleared: %v %v %v %v", j, query[j], headers[j], form[j], memo[j])
		}
	}
}

// TestReuse: a request kept by its owner for the next one (an http connection's) keeps the memory
// of its strings only when the owner recycles it and the arena is small, and drops lists grown
// past the kept-request bounds: the next request starts small, and strings a released request
// made stay as they were.
func TestReuse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		arena     int
		kvs       int
		recycle   bool
		keepArena bool
		keepLists bool
	}{
		{"recycled small", 100, 4, true, true, true},
		{"recycled at the bound", maxConnArena, maxConnKVs, true, true, true},
		{"recycled past the arena bound", maxConnArena + 1, 4, true, false, true},
		{"recycled with long lists", 100, maxConnKVs + 1, true, true, false},
		{"released", 100, 4, false, false, true},
		{"released large", 1 << 20, 1000, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Request
			r.reserve(tc.arena)
			s := r.str([]byte("path-made-in-the-arena"))
			r.Path = s
			r.Query = make([]KV, 1, tc.kvs)
			r.Headers = make([]KV, 1, tc.kvs)
			r.Form = make([]KV, 1, tc.kvs)
			r.Query[0], r.Headers[0], r.Form[0] = KV{"q", s}, KV{"h", s}, KV{"f", s}
			r.SetMemo(1, s)
			r.kept = "kept value"
			arena := r.arena
			Reuse(&r, tc.recycle)
			if r.Path != "" || len(r.Query) != 0 || len(r.Headers) != 0 || len(r.Form) != 0 || len(r.memo) != 0 || len(r.arena) != 0 {
				t.Fatalf("not reset: %+v", r)
			}
			if r.kept != "kept value" {
				t.Errorf("kept = %v, want it kept", r.kept)
			}
			if kept := cap(r.arena) != 0 && unsafe.SliceData(r.arena) == unsafe.SliceData(arena); kept != tc.keepArena {
				t.Errorf("arena of %d bytes kept: %t, want %t", cap(arena), kept, tc.keepArena)
			}
			if kept := cap(r.Query) != 0 && cap(r.Headers) != 0 && cap(r.Form) != 0; kept != tc.keepLists {
				t.Errorf("lists of %d kept: %t, want %t", tc.kvs, kept, tc.keepLists)
			}
			// The next request's strings: a released request's string is never written over.
			r.str([]byte("NEXT-REQUEST-WRITES-HERE"))
			if !tc.recycle && s != "path-made-in-the-arena" {
				t.Errorf("a released request's string became %q", s)
			}
		})
	}
}
