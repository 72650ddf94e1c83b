package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/config"
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

// TestDefaultToStart: Mountebank's command line without a command starts the server.
func TestDefaultToStart(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		argv0 string
		want  []string
	}{
		{nil, "/usr/local/bin/mockd", nil},
		{nil, "/usr/local/bin/mb", []string{"start"}},
		{[]string{"--port", "3000"}, "mockd", []string{"start", "--port", "3000"}},
		{[]string{"-h", "127.0.0.1"}, "mockd", []string{"start", "-h", "127.0.0.1"}},
		{[]string{"-h"}, "mockd", []string{"-h"}},
		{[]string{"-h", "--port", "1"}, "mockd", []string{"-h", "--port", "1"}},
		{[]string{"--help"}, "mb", []string{"--help"}},
		{[]string{"--version"}, "mockd", []string{"--version"}},
		{[]string{"-v"}, "mockd", []string{"-v"}},
		{[]string{"serve", "-c", "x.yaml"}, "mockd", []string{"serve", "-c", "x.yaml"}},
		{[]string{"save", "--port", "1"}, "mb", []string{"save", "--port", "1"}},
	} {
		if got := defaultToStart(tc.args, tc.argv0); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("defaultToStart(%q, %q) = %q, want %q", tc.args, tc.argv0, got, tc.want)
		}
	}
}

// TestApplyServerBlock: a YAML server block sets the flags the command line left alone; a
// null value or a configfile key is an error.
func TestApplyServerBlock(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		block   string
		wantErr string
		want    map[string]string
	}{
		{nil, `{"port": 3000, "debug": true, "ipWhitelist": ["127.0.0.2", "127.0.0.3"]}`, "",
			map[string]string{"port": "3000", "debug": "true", "ipWhitelist": "127.0.0.2|127.0.0.3"}},
		{[]string{"--port", "4000"}, `{"port": 3000}`, "", map[string]string{"port": "4000"}},
		{nil, `{"port": null}`, "server.port: unsupported value", nil},
		{nil, `{"configfile": "x.json"}`, "server.configfile: not allowed", nil},
		{nil, `{"port": "many"}`, "server.port:", nil},
	} {
		cmd := newServeCmd("serve", false)
		if err := cmd.Flags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		v, err := config.ParseJSON([]byte(tc.block))
		if err != nil {
			t.Fatal(err)
		}
		err = applyServerBlock(cmd, v.(*config.Object))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.block, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.block, err)
		}
		for k, want := range tc.want {
			if got := cmd.Flags().Lookup(k).Value.String(); got != want {
				t.Errorf("%s: --%s = %q, want %q", tc.block, k, got, want)
			}
		}
	}
}
