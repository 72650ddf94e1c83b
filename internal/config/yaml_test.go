package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseYAMLKeepEnv(t *testing.T) {
	t.Setenv("KEEP_ENV_X", "set")
	src := []byte("a: ${KEEP_ENV_X}\nb: ${KEEP_ENV_Y:-4545}\nc: $${KEEP_ENV_X}\nd: \"${KEEP_ENV_X}\"\n")
	v, _, err := ParseYAMLKeepEnv(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(MarshalJSON(v, 0)), `{"a":"${KEEP_ENV_X}","b":"${KEEP_ENV_Y:-4545}","c":"${KEEP_ENV_X}","d":"${KEEP_ENV_X}"}`; got != want {
		t.Errorf("kept: %s, want %s", got, want)
	}
	v, _, _ = ParseYAML(src)
	if got, want := string(MarshalJSON(v, 0)), `{"a":"set","b":4545,"c":"${KEEP_ENV_X}","d":"set"}`; got != want {
		t.Errorf("expanded: %s, want %s", got, want)
	}
}

// TestYAMLAliasBomb: nine lines of aliases of aliases ("billion laughs") expanded to 10^9 values
// (50 s and 3.4 GB before mockd started); they are refused once past the bound, while a
// document using anchors as configs do reads as before.
func TestYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, _, err := ParseYAML([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("billion laughs: %v, want the alias bound's error", err)
	}
	doc := "base: &base {statusCode: 200, headers: {a: b}}\nstubs:\n"
	for i := 0; i < 1000; i++ {
		doc += "  - {<<: *base, body: x}\n"
	}
	v, _, err := ParseYAML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	stubs, _ := AsObject(v).Get("stubs")
	if s, ok := stubs.([]any); !ok || len(s) != 1000 {
		t.Fatalf("anchors: %v", stubs)
	}
	if st, _ := AsObject(stubs.([]any)[999]).Get("statusCode"); st != float64(200) {
		t.Fatalf("merged statusCode %v", st)
	}
}
