package request

import (
	stdjson "encoding/json"
	"unsafe"

	gojson "github.com/goccy/go-json"
)

// jsonParser decodes one JSON text into plain values (nil, bool, float64,
// string, []any, map[string]any).
type jsonParser interface {
	parse(b []byte) (any, error)
}

type goccyParser struct{}

func (goccyParser) parse(b []byte) (v any, err error) {
	err = gojson.Unmarshal(b, &v)
	return v, err
}

type stdParser struct{}

func (stdParser) parse(b []byte) (v any, err error) {
	err = stdjson.Unmarshal(b, &v)
	return v, err
}

var (
	fastJSON jsonParser = goccyParser{}
	safeJSON jsonParser = stdParser{}
)

// ParseJSON parses s as JSON.parse would (objects become map[string]any,
// numbers float64). ok is false when s is not a JSON text.
func ParseJSON(s string) (v any, ok bool) {
	if !MaybeJSON(s) {
		return nil, false
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	v, err, panicked := tryParse(fastJSON, b)
	if panicked {
		v, err = safeJSON.parse(b)
	}
	return v, err == nil
}

func tryParse(p jsonParser, b []byte) (v any, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			v, err, panicked = nil, nil, true
		}
	}()
	v, err = p.parse(b)
	return v, err, false
}

// MaybeJSON is a cheap filter: a JSON text starts, after white space, with
// one of {["-0123456789tfn.
func MaybeJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n':
			return true
		default:
			return c >= '0' && c <= '9'
		}
	}
	return false
}
