package e2e

import (
	"debug/buildinfo"
	"sort"
	"strings"
	"testing"
)

// linkedModules are the modules linked into mockd, each with what uses it. Go initialises every
// package linked into a binary at every start, whatever the command, and the runtime then walks
// the binary's whole function table and every itab (touching the type descriptor of each
// concrete type): a module costs resident memory at every `mockd serve` even when the command
// that needs it never runs. libopenapi, linked for `mockd import openapi` alone, cost 2.5 MiB of
// it (and 9 MB of binary), more than the margin below Rift's (issue 26). So a new module is not
// wrong, but measure it before adding it here: the start-up VmRSS and RssFile of `mockd start`
// with and without it (README, "Start-up memory", says how).
var linkedModules = map[string]string{
	"github.com/antchfx/xmlquery":         "xpath predicates and behaviors",
	"github.com/antchfx/xpath":            "xpath predicates and behaviors",
	"github.com/beorn7/perks":             "prometheus",
	"github.com/cespare/xxhash/v2":        "prometheus",
	"github.com/dlclark/regexp2/v2":       "JavaScript-compatible regular expressions",
	"github.com/dop251/goja":              "inject, decorate, shell transforms",
	"github.com/go-sourcemap/sourcemap":   "goja",
	"github.com/goccy/go-json":            "JSON bodies",
	"github.com/golang/groupcache":        "goja",
	"github.com/google/pprof":             "goja (its profiler; the package init compiles 20 regexes: 150 KB of heap)",
	"github.com/klauspost/compress":       "fasthttp (gzip, zstd)",
	"github.com/molecule-man/go-brrr":     "fasthttp (brotli)",
	"github.com/munnerz/goautoneg":        "prometheus",
	"github.com/ohler55/ojg":              "jsonpath predicates and behaviors",
	"github.com/prometheus/client_golang": "GET /metrics",
	"github.com/prometheus/client_model":  "GET /metrics",
	"github.com/prometheus/common":        "GET /metrics",
	"github.com/prometheus/procfs":        "GET /metrics (process metrics)",
	"github.com/redis/go-redis/v9":        "--store (1.4 MiB at start, measured: a candidate for a smaller client)",
	"github.com/spf13/cobra":              "the command line",
	"github.com/spf13/pflag":              "the command line",
	"github.com/valyala/bytebufferpool":   "fasthttp",
	"github.com/valyala/fasthttp":         "the http(s) imposters and the admin API",
	"go.uber.org/atomic":                  "go-redis",
	"go.yaml.in/yaml/v3":                  "YAML configs, the OpenAPI import",
	"golang.org/x/net":                    "fasthttp, idna",
	"golang.org/x/sys":                    "fasthttp, rlimits",
	"golang.org/x/text":                   "charsets of bodies",
	"google.golang.org/protobuf":          "prometheus",
}

// TestLinkedModules fails when a module not in linkedModules is linked into mockd (see there
// why), and lists the entries no longer linked.
func TestLinkedModules(t *testing.T) {
	info, err := buildinfo.ReadFile(mockdBin)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	var added []string
	for _, d := range info.Deps {
		linked[d.Path] = true
		if _, ok := linkedModules[d.Path]; !ok {
			added = append(added, d.Path+" "+d.Version)
		}
	}
	if len(added) > 0 {
		sort.Strings(added)
		t.Errorf("modules linked into mockd that linkedModules does not list (each costs resident memory at every start: measure, then list it):\n  %s",
			strings.Join(added, "\n  "))
	}
	for m := range linkedModules {
		if !linked[m] {
			t.Logf("linkedModules lists %s, no longer linked: remove it from the list", m)
		}
	}
}
