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

// TestRenderJSONChunksLargeValues: a value with no Stream (stubs kept as text, nested deep or
// large, objects and lists of them) is written a chunk at a time too, as AppendJSON renders it;
// without a writer, the rendering keeps the text up to its limit and stops past it.
func TestRenderJSONChunksLargeValues(t *testing.T) {
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	raw := func(text string, more ...Member) *RawObject { return &RawObject{Text: text, More: more} }
	wide := `{"responses":[` + strings.Repeat(`{"is":{"body":"x\"y,{z}"}},`, 5000) + `{"is":{}}]}`
	packed := &RawObject{Text: PackJSON([]byte(wide)), Packed: true}
	link := Member{Key: "_links", Value: NewObject("self", NewObject("href", "h"))}
	for _, v := range []Value{
		NewObject("stubs", []any{raw(`{"responses":[{"is":{"body":`+deep(1500)+`}}]}`, link)}),
		NewObject("a", 1.0, "stubs", []any{raw(wide), packed, raw(`{}`, link), raw(wide, link)}, "b", NewObject()),
		[]any{raw(`{"a":` + deep(3000) + `}`), NewObject("n", []any{raw(wide)})},
		raw(wide),
	} {
		for _, indent := range []int{0, 2, 4} {
			want := AppendJSON(nil, v, indent)
			var w countingWriter
			if err := WriteJSON(&w, v, indent); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("WriteJSON(indent %d) differs from AppendJSON:\n got %.300s\nwant %.300s", indent, w.Bytes(), want)
			}
			if w.largest > 2*writeChunk {
				t.Errorf("indent %d: a write of %d bytes of %d, want chunks of about %d", indent, w.largest, len(want), writeChunk)
			}
			c := &Chunker{Limit: 1 + len(want)} // the text it appends to counts
			if got := RenderJSON([]byte("x"), v, indent, c); c.Err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Fatalf("indent %d, limit %d: %v, %d bytes", indent, 1+len(want), c.Err, len(got))
			}
			c = &Chunker{Limit: len(want)}
			if RenderJSON([]byte("x"), v, indent, c); c.Err != ErrOver {
				t.Fatalf("indent %d, limit %d: %v, want ErrOver", indent, len(want), c.Err)
			}
		}
	}
}

// TestAppendIndentedTo: indenting a large text to a Chunker writes what AppendIndentedAt
// appends, a chunk at a time, and stops soon past the limit of one without a writer.
func TestAppendIndentedTo(t *testing.T) {
	text := `{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `,"b":[` + strings.Repeat(`"s,[]{}:",`, 10000) + `1]}`
	want := AppendIndentedAt([]byte("x"), text, 2, 2)
	var w countingWriter
	c := &Chunker{W: &w}
	if err := c.Finish(AppendIndentedTo([]byte("x"), text, 2, 2, c)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), want) || w.largest > 2*writeChunk {
		t.Fatalf("%d bytes (largest write %d), want %d", w.Len(), w.largest, len(want))
	}
	c = &Chunker{Limit: 1 << 20}
	if got := AppendIndentedTo(nil, text, 2, 2, c); c.Err != ErrOver || cap(got) > 4<<20 {
		t.Fatalf("%v, kept %d bytes", c.Err, cap(got))
	}
}
