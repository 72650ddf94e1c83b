package config

import (
	"bytes"
	"strings"
	"testing"
)

// countingWriter records the largest write.
type countingWriter struct {
	bytes.Buffer
	largest int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

func streamOf(vs ...Value) *Stream {
	return &Stream{Each: func(yield func(Value) bool) {
		for _, v := range vs {
			if !yield(v) {
				return
			}
		}
	}, Bytes: 100 * len(vs)}
}

func TestWriteJSONRendersAsAppendJSON(t *testing.T) {
	big := make([]Value, 5000)
	for i := range big {
		big[i] = NewObject("i", float64(i), "body", strings.Repeat("x", 100), "list", []any{"a", 1.0, nil})
	}
	for _, v := range []Value{
		NewObject("a", 1.0, "requests", streamOf(), "b", "x"),
		NewObject("requests", streamOf(NewObject("x", 1.0), "s", []any{}), "stubs", []any{NewObject("k", true)}),
		[]any{streamOf(1.0, 2.0), NewObject("n", streamOf(streamOf("deep")))},
		NewObject("requests", streamOf(big...), "tail", NewObject()),
		"plain",
	} {
		for _, indent := range []int{0, 2} {
			want := AppendJSON(nil, v, indent)
			var w countingWriter
			if err := WriteJSON(&w, v, indent); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("WriteJSON(indent %d) differs from AppendJSON:\n got %.300s\nwant %.300s", indent, w.Bytes(), want)
			}
			if w.largest > 2*writeChunk {
				t.Errorf("a write of %d bytes, want chunks of about %d", w.largest, writeChunk)
			}
		}
	}
	if n := StreamBytes(NewObject("a", streamOf(1.0), "b", []any{streamOf(1.0, 2.0)})); n != 300 {
		t.Errorf("StreamBytes = %d, want 300", n)
	}
}
