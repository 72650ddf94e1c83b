package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
)

// ejsTimeout bounds one config template's JavaScript, so a template with an endless loop fails
// the start instead of hanging it.
const ejsTimeout = 10 * time.Second

// stripSemi drops an output tag's trailing semicolon, as EJS 2 does (`<%- stringify(filename,
// 'cert.pem'); %>`, Mountebank in Action's listing 3.10).
func stripSemi(code string) string {
	t := strings.TrimRight(code, " \t\r\n")
	if strings.HasSuffix(t, ";") {
		return t[:len(t)-1] + code[len(t):]
	}
	return code
}

// maxIncludeDepth stops templates that include themselves.
const maxIncludeDepth = 32

// RenderEJS renders a Mountebank config file the way mountebank-formatters does with EJS 2:
// the file is a template (<% code %>, <%= escaped %>, <%- raw %>, <%# comment %>, <%% literal,
// -%> and _%> trimming), `include(path[, data])` and the legacy `<% include path %>` directive
// insert another template relative to the including file, and `stringify(filename, path[, data])`
// (also called `inject`) inserts a rendered file as the inside of a JSON string, relative to the
// root file. Errors name the file and, for template syntax, the line.
func RenderEJS(file string) (string, error) {
	// A file without a tag is its own rendering: no JavaScript runtime is made for it (the
	// common case; a runtime costs about 1 MiB of code and heap touched at every start).
	// Invalid UTF-8 takes the long way, which turns it into U+FFFD as it always has.
	if text, err := config.ReadLimited(file); err == nil && !bytes.Contains(text, []byte("<%")) && utf8.Valid(text) {
		return string(text), nil
	}
	return renderTemplate(file)
}

// templateMaxString, when positive, stands for V8's longest string in templates (as
// Options.maxString for scripts): tests set it.
var templateMaxString int64

// renderTemplate renders file with a JavaScript runtime (RenderEJS without its shortcut).
func renderTemplate(file string) (string, error) {
	vm := goja.New()
	// new ArrayBuffer(1e11) in a template ended mockd (fatal error: out of memory)
	native := vm.NewObject()
	_ = native.Set("maxBytes", DefaultMemoryLimit)
	if templateMaxString > 0 {
		_ = native.Set("maxString", templateMaxString)
	}
	installGuards(vm, vm.GlobalObject(), native)
	// The scripts' prelude bounds the string operations (repeat, padStart, join, replace), the
	// iterations and JSON.stringify as it does for scripts: without it 'x'.repeat(2e9) in a
	// template took 30 s and 2 GB, a replace 54 s and 3.8 GB, before mockd started. (It also
	// gives templates node's console and Buffer; process is the template's own, below.)
	var stopping atomic.Bool
	runPrelude(vm, native, &stopping)
	// Node's process.env: templates read the environment with it (<%= process.env.PORT %>, as
	// in Mountebank in Action's listing 6.4); each value a string, an unset name undefined.
	env := vm.NewObject()
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			_ = env.Set(k, v)
		}
	}
	process := vm.NewObject()
	_ = process.Set("env", env)
	_ = vm.Set("process", process)
	timer := time.AfterFunc(ejsTimeout, func() {
		interrupt(vm, &stopping, "config template took longer than "+ejsTimeout.String())
	})
	defer timer.Stop()
	r := &ejsRenderer{vm: vm, root: file}
	return r.render(file, r.rootLocals(goja.Undefined(), false), 0)
}

type ejsRenderer struct {
	vm   *goja.Runtime
	root string
}

// rootLocals are the variables mountebank-formatters gives a template: filename (the root
// file), stringify and inject, and for a stringified file also data.
func (r *ejsRenderer) rootLocals(data goja.Value, withData bool) *goja.Object {
	o := r.vm.NewObject()
	_ = o.Set("filename", r.root)
	_ = o.Set("stringify", r.stringify)
	_ = o.Set("inject", r.stringify)
	if withData {
		_ = o.Set("data", data)
	}
	return o
}

// stringify(filename, includeFile, data) renders includeFile (relative to the root file) and
// returns it trimmed and JSON-escaped, without the quotes; the first argument is a deprecated
// placeholder that stands for includeFile when that is absent.
func (r *ejsRenderer) stringify(call goja.FunctionCall) goja.Value {
	name := call.Argument(1)
	if goja.IsUndefined(name) || goja.IsNull(name) {
		name = call.Argument(0)
	}
	out, err := r.render(filepath.Join(filepath.Dir(r.root), name.String()), r.rootLocals(call.Argument(2), true), 1)
	if err != nil {
		panic(r.vm.NewGoError(err))
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as JSON.stringify
	_ = enc.Encode(strings.TrimSpace(out))
	quoted := strings.TrimSuffix(buf.String(), "\n")
	return r.vm.ToValue(quoted[1 : len(quoted)-1])
}

// render renders file with locals as its variables (EJS's `with (locals)`), plus an include
// function resolving paths against file's directory.
func (r *ejsRenderer) render(file string, locals *goja.Object, depth int) (string, error) {
	if depth > maxIncludeDepth {
		return "", fmt.Errorf("%s: includes nest deeper than %d (does a template include itself?)", file, maxIncludeDepth)
	}
	text, err := config.ReadLimited(file)
	if err != nil {
		return "", fmt.Errorf("cannot read template: %w", err)
	}
	dir := filepath.Dir(file)
	// include(path, data) renders path with the current variables plus data's, as EJS does.
	_ = locals.Set("include", func(call goja.FunctionCall) goja.Value {
		child := r.vm.NewObject()
		for _, k := range locals.Keys() {
			_ = child.Set(k, locals.Get(k))
		}
		if d, ok := call.Argument(1).(*goja.Object); ok {
			for _, k := range d.Keys() {
				_ = child.Set(k, d.Get(k))
			}
		}
		out, err := r.render(filepath.Join(dir, call.Argument(0).String()), child, depth+1)
		if err != nil {
			panic(r.vm.NewGoError(err))
		}
		return r.vm.ToValue(out)
	})
	src, err := r.compile(file, string(text), locals, depth)
	if err != nil {
		return "", err
	}
	fnVal, err := r.vm.RunScript(file, "(function (locals, escapeFn) { with (locals) {\n"+src+"\n} })")
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	fn, _ := goja.AssertFunction(fnVal)
	v, err := fn(goja.Undefined(), locals, r.vm.ToValue(escapeXML))
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return v.String(), nil
}

var legacyInclude = regexp.MustCompile(`^\s*include\s+(\S+)\s*$`)

// compile turns an EJS template into the body of a JavaScript function returning its output.
func (r *ejsRenderer) compile(file, text string, locals *goja.Object, depth int) (string, error) {
	var b strings.Builder
	b.WriteString("var __out = '';\n")
	line := 1
	for len(text) > 0 {
		open := strings.Index(text, "<%")
		if open < 0 {
			writeText(&b, text)
			break
		}
		if strings.HasPrefix(text[open:], "<%%") {
			writeText(&b, text[:open]+"<%")
			line += strings.Count(text[:open+3], "\n")
			text = text[open+3:]
			continue
		}
		lit := text[:open]
		rest := text[open+2:]
		kind := byte(0)
		if len(rest) > 0 && strings.IndexByte("=-#_", rest[0]) >= 0 {
			kind = rest[0]
			rest = rest[1:]
		}
		if kind == '_' {
			lit = strings.TrimRight(lit, " \t")
		}
		writeText(&b, lit)
		line += strings.Count(lit, "\n")
		closeAt := strings.Index(rest, "%>")
		if closeAt < 0 {
			return "", fmt.Errorf("%s:%d: could not find matching close tag for \"<%%\"", file, line)
		}
		code := rest[:closeAt]
		after := rest[closeAt+2:]
		switch {
		case strings.HasSuffix(code, "-"):
			code = code[:len(code)-1]
			after = strings.TrimPrefix(strings.TrimPrefix(after, "\r"), "\n")
		case strings.HasSuffix(code, "_"):
			code = code[:len(code)-1]
			after = strings.TrimLeft(after, " \t")
		}
		switch kind {
		case '#':
		case '=':
			fmt.Fprintf(&b, "__out += escapeFn(%s);\n", stripSemi(code))
		case '-':
			fmt.Fprintf(&b, "__out += (%s);\n", stripSemi(code))
		default:
			if m := legacyInclude.FindStringSubmatch(code); m != nil {
				// The legacy directive shares the including template's variables.
				child := r.vm.NewObject()
				for _, k := range locals.Keys() {
					_ = child.Set(k, locals.Get(k))
				}
				inc, err := r.render(filepath.Join(filepath.Dir(file), m[1]), child, depth+1)
				if err != nil {
					return "", err
				}
				writeText(&b, inc)
			} else {
				b.WriteString(code)
				b.WriteString("\n")
			}
		}
		line += strings.Count(rest[:closeAt+2], "\n")
		text = after
	}
	b.WriteString("return __out;\n")
	return b.String(), nil
}

func writeText(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	quoted, _ := json.Marshal(s)
	fmt.Fprintf(b, "__out += %s;\n", quoted)
}

// escapeXML is EJS's <%= %> escaping.
func escapeXML(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(v.String())
}

var ejsPrelude = sync.OnceValue(func() *goja.Program { return goja.MustCompile("prelude.js", preludeSource, true) })

// runPrelude runs the scripts' prelude in vm, whose natives need only maxBytes then (the others
// are read when a function of the prelude runs: a template that calls console.log or
// Buffer.from, which need them, gets the prelude's natives for those below), and gives
// Object.prototype its toJSON accessor (see objectToJSON), set off by stopping.
func runPrelude(vm *goja.Runtime, native *goja.Object, stopping *atomic.Bool) {
	_ = native.Set("log", func(string, string) {})
	_ = native.Set("format", func(call goja.FunctionCall) goja.Value { return vm.ToValue(fmt.Sprint(call.Arguments)) })
	_ = native.Set("encode", func(s, enc string) goja.ArrayBuffer {
		b, _ := encodeString(s, enc)
		return vm.NewArrayBuffer(b)
	})
	_ = native.Set("isEncoding", func(enc string) bool { _, ok := encodeString("", enc); return ok })
	v, err := vm.RunProgram(ejsPrelude())
	if err != nil {
		panic("BUG: script prelude: " + err.Error())
	}
	fn, _ := goja.AssertFunction(v)
	if _, err := fn(goja.Undefined(), vm.GlobalObject(), native); err != nil {
		panic("BUG: script prelude: " + err.Error())
	}
	arrayToJSON, _ := native.Get("arrayToJSON").(*goja.Object)
	objectToJSON(vm, native, stopping, arrayToJSON)
}
