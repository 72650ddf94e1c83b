package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestServerCommandsHelp pins the flags of the commands that start a server (their names,
// shorthands, defaults and help text) with a golden copy of each command's --help.
func TestServerCommandsHelp(t *testing.T) {
	for _, name := range []string{"serve", "start", "restart"} {
		t.Run(name, func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs([]string{name, "--help"})
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "help-"+name+".txt")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("mockd %s --help:\n%s\nwant (%s; -update rewrites it):\n%s", name, got, golden, want)
			}
		})
	}
}
