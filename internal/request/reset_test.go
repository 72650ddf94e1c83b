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
