package config

import (
	"fmt"
	"math"

	"github.com/mockd/mockd/internal/jsvalue"
)

// Expect is a stub's expectation, mockd's `expect` key (Mountebank configs never hold it): how
// many requests the stub must answer for GET /verify to pass.
type Expect struct {
	Min int
	Max int // -1: no upper bound
}

var expectKeys = []string{"times", "atLeast", "atMost"}

// ParseExpect reads an `expect` value: {times: N}, or {atLeast: N}, {atMost: M} or both, each a
// non-negative integer. A nil value is no expectation (nil, nil).
func ParseExpect(v Value, path string) (*Expect, []*Error) {
	if v == nil {
		return nil, nil
	}
	o, ok := v.(*Object)
	fail := func(p, format string, args ...any) []*Error {
		return []*Error{{Code: CodeBadData, Path: p, Message: fmt.Sprintf(format, args...), Source: v}}
	}
	if !ok || o == nil || o.Len() == 0 {
		return nil, fail(path, "expect must be an object with times, or with atLeast and/or atMost")
	}
	if errs := unknownKeys(o, path, expectKeys); len(errs) > 0 {
		return nil, errs
	}
	count := func(key string) (int, []*Error) {
		f, isNum := mustGet(o, key).(float64)
		if !isNum || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return 0, fail(JoinPath(path, key), "%s must be a non-negative integer, not %s", key, describe(mustGet(o, key)))
		}
		return int(f), nil
	}
	e := &Expect{Max: -1}
	var errs []*Error
	if o.Has("times") {
		if o.Has("atLeast") || o.Has("atMost") {
			return nil, fail(path, "expect: times cannot be combined with atLeast or atMost")
		}
		n, err := count("times")
		e.Min, e.Max, errs = n, n, err
		return e, errs
	}
	if o.Has("atLeast") {
		n, err := count("atLeast")
		e.Min, errs = n, append(errs, err...)
	}
	if o.Has("atMost") {
		n, err := count("atMost")
		e.Max, errs = n, append(errs, err...)
	}
	if len(errs) == 0 && e.Max >= 0 && e.Min > e.Max {
		return nil, fail(path, "expect: atLeast %d is above atMost %d", e.Min, e.Max)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return e, nil
}

// Met reports whether a stub that answered hits requests meets the expectation.
func (e *Expect) Met(hits uint64) bool {
	return hits >= uint64(e.Min) && (e.Max < 0 || hits <= uint64(e.Max))
}

// String says what the expectation asks: "exactly 2 requests", "at least 1 request"…
func (e *Expect) String() string {
	switch {
	case e.Min == e.Max:
		return "exactly " + requests(e.Min)
	case e.Max < 0:
		return "at least " + requests(e.Min)
	case e.Min == 0:
		return "at most " + requests(e.Max)
	}
	return fmt.Sprintf("between %d and %s", e.Min, requests(e.Max))
}

func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// describe names a value's JSON type for a message, with the value when it is short.
func describe(v Value) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", t)
	case float64, bool:
		return jsvalue.String(t)
	case []any:
		return "an array"
	}
	return "an object"
}
