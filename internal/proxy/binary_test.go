package proxy

import (
	"strings"
	"testing"
)

// isBinarySearched is IsBinary as Mountebank's httpProxy writes it: each binary encoding and
// type searched for in the whole value.
func isBinarySearched(contentEncoding, contentType string) bool {
	for _, e := range binaryEncodings {
		if strings.Contains(contentEncoding, e) {
			return true
		}
	}
	for _, t := range binaryTypes {
		if strings.Contains(contentType, t) {
			return true
		}
	}
	return false
}

// TestIsBinary: IsBinary, which looks for the types around each '/', says what searching
// for each of them says.
func TestIsBinary(t *testing.T) {
	cases := []struct {
		encoding, typ string
		want          bool
	}{
		{"", "", false},
		{"", "text/plain", false},
		{"", "application/json; charset=utf-8", false},
		{"", "image/png", true},
		{"", "IMAGE/png", false}, // as Mountebank: case-sensitive
		{"", "audio/", true},
		{"", "audio", false},
		{"", "xaudio/mpeg", true}, // a substring, wherever it is
		{"", "application/pdf", true},
		{"", "application/pd", false},
		{"", "application/pdfx", true},
		{"", "text/plain; x=application/zip", true},
		{"", "application/x-tar; y=a/b", true},
		{"", "application//zip", false},
		{"", "/", false},
		{"", "//", false},
		{"", "application/vnd.ms-excel", true},
		{"", "application/vnd.ms-exce", false},
		{"", "font/woff2", true},
		{"", "model/gltf", true},
		{"", "video/mp4", true},
		{"gzip", "text/plain", true},
		{"x-gzip", "", true},
		{"identity", "text/plain", false},
		{"deflate, br", "", true},
	}
	for _, c := range cases {
		if got := IsBinary(c.encoding, c.typ); got != c.want || got != isBinarySearched(c.encoding, c.typ) {
			t.Errorf("IsBinary(%q, %q) = %v, want %v", c.encoding, c.typ, got, c.want)
		}
	}
}

// FuzzIsBinary: IsBinary says what searching for each type and encoding says.
func FuzzIsBinary(f *testing.F) {
	f.Add("", "text/plain")
	f.Add("gzip", "application/octet-stream")
	f.Add("", "a/application/zip/image/")
	f.Fuzz(func(t *testing.T, encoding, typ string) {
		if got, want := IsBinary(encoding, typ), isBinarySearched(encoding, typ); got != want {
			t.Errorf("IsBinary(%q, %q) = %v, searching says %v", encoding, typ, got, want)
		}
	})
}

// BenchmarkIsBinary: IsBinary against the search of every type (searched), for an answer's
// common Content-Types.
func BenchmarkIsBinary(b *testing.B) {
	for _, typ := range []string{"text/plain", "application/json; charset=utf-8", "image/png"} {
		b.Run(typ, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				IsBinary("", typ)
			}
		})
		b.Run("searched "+typ, func(b *testing.B) {
			for b.Loop() {
				isBinarySearched("", typ)
			}
		})
	}
}
