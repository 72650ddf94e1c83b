package behavior

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

func TestFilesCheck(t *testing.T) {
	dir := t.TempDir()
	f := NewFiles([]string{dir}, 0)
	for path, ok := range map[string]bool{
		filepath.Join(dir, "a.csv"):              true,
		filepath.Join(dir, "sub", "b.csv"):       true,
		filepath.Join(dir, "..", "c.csv"):        false,
		"/etc/passwd":                            false,
		filepath.Join(dir+"x", "d.csv"):          false,
		filepath.Join(dir, "sub", "..", "e.csv"): true,
	} {
		err := f.Check("lookup file", path)
		if (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want allowed %v", path, err, ok)
		}
		if err != nil && err.Code != config.CodeInsufficient {
			t.Errorf("Check(%q): code %q, want %q", path, err.Code, config.CodeInsufficient)
		}
	}
	// The working directory and a config file's directory are often one: the refusal names it once.
	twice := NewFiles([]string{dir, dir + string(filepath.Separator), filepath.Join(dir, "sub", "..")}, 0)
	if err := twice.Check("lookup file", "/etc/passwd"); err == nil || strings.Count(err.Message, dir) != 1 {
		t.Errorf("roots %q: refusal %v, want the directory named once", twice.Roots, err)
	}
	if err := (*Files)(nil).Check("lookup file", "/etc/passwd"); err != nil {
		t.Errorf("no rules refuse %v", err)
	}
	if err := NewFiles(nil, 0).Check("lookup file", "/etc/passwd"); err != nil {
		t.Errorf("no roots refuse %v", err)
	}
}

func TestFilesRead(t *testing.T) {
	dir := t.TempDir()
	f := NewFiles([]string{dir}, 10)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if data, _, err := f.Read(write("ok.csv", "id,name\n")); err != nil || string(data) != "id,name\n" {
		t.Errorf("a small regular file: %q %v", data, err)
	}
	if _, _, err := f.Read(write("big.csv", "id,name\n1,ann\n")); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("a file past the limit: %v", err)
	}
	if _, _, err := f.Read(filepath.Join(dir, "missing.csv")); err == nil {
		t.Error("a missing file was read")
	}
	outside := t.TempDir()
	target := filepath.Join(outside, "secret.csv")
	if err := os.WriteFile(target, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(target, link); err == nil {
		if _, _, err := f.Read(link); err == nil {
			t.Error("a link out of the roots was followed")
		}
	}
}

// A lookup reads its CSV when a request needs it, as Mountebank does: a file written or changed
// after the stub was compiled is used.
func TestLookupReadsOnUse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "people.csv")
	behaviors := []any{config.NewObject("lookup", config.NewObject(
		"key", config.NewObject("from", "path", "using", config.NewObject("method", "regex", "selector", `\d+`)),
		"fromDataSource", config.NewObject("csv", config.NewObject("path", path, "keyColumn", "id")),
		"into", "$ROW"))}
	comp, err := Compile(behaviors, Options{Files: NewFiles([]string{dir}, 0), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	apply := func() string {
		out, err := comp.Apply(context.Background(), &request.Request{Method: "GET", Path: "/people/42"}, config.NewObject("body", `name=$ROW["name"]`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return get(out, "body").(string)
	}
	if got := apply(); got != `name=$ROW["name"]` {
		t.Errorf("before the file exists: %q", got)
	}
	for _, tc := range []struct{ body, want string }{
		{"id,name\n42,Bob\n", "name=Bob"},
		{"id,name\n42,Robert\n", "name=Robert"},
		{"id,name\n42,Bob Jr.\n", "name=Bob Jr."},
	} {
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := apply(); got != tc.want {
			t.Errorf("with %q: %q, want %q", tc.body, got, tc.want)
		}
	}

	outside := []any{config.NewObject("lookup", config.NewObject(
		"key", config.NewObject("from", "path", "using", config.NewObject("method", "regex", "selector", `\d+`)),
		"fromDataSource", config.NewObject("csv", config.NewObject("path", "/etc/passwd", "keyColumn", "id")),
		"into", "$ROW"))}
	if _, err := Compile(outside, Options{Files: NewFiles([]string{dir}, 0)}); err == nil {
		t.Error("a lookup of a file outside the roots compiled")
	}
}

// FuzzParseCSV reads arbitrary CSV text with arbitrary delimiters; nothing may panic, and every
// row is read under the header.
func FuzzParseCSV(f *testing.F) {
	f.Add("id,name\n1,Ann\n42,\"Bob, Jr.\"\n", ",", "id")
	f.Add("id;name\r\n1;Ann\r\n", ";", "id")
	f.Add("a||b\nx||y\n", "||", "a")
	f.Add("\"unterminated\n", ",", "x")
	f.Fuzz(func(t *testing.T, data, delim, key string) {
		tbl := parseCSV([]byte(data), delim, key, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if tbl.hasKey {
			_ = tbl.row(key, "1")
		} else if len(tbl.rows) > 0 {
			t.Fatalf("rows read without a key column: %q", tbl.rows)
		}
	})
}
