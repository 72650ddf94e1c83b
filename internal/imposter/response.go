package imposter

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/behavior"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/proxy"
)

// header is one response header line, as it goes on the wire.
type header struct {
	name, value string
	// set: the first line of this exact name, without CR or LF, so it may skip the checks of
	// fasthttp's Add (see writeHTTP).
	set bool
}

// markSettable sets header.set on the lines it applies to.
func markSettable(hs []header) {
	for i := range hs {
		hs[i].set = !strings.ContainsAny(hs[i].name, "\r\n") && !strings.ContainsAny(hs[i].value, "\r\n")
		for j := 0; j < i && hs[i].set; j++ {
			hs[i].set = hs[j].name != hs[i].name
		}
	}
}

// response is one compiled response of a stub: everything the hot path needs, precomputed.
type response struct {
	config *config.Object // the response as configured (for --debug matches)
	is     *config.Object // the `is` object (for --debug matches)

	status    int
	statusErr error // an invalid statusCode fails the request as Mountebank does
	headers   []header
	body      []byte
	// hasConnection and hasContentLength say whether the configured headers name them.
	hasConnection    bool
	hasContentLength bool

	tcp   *tcpResponse // tcp imposters only (tcp.go)
	proxy *proxy.Proxy // http(s) proxy responses only (proxy.go)

	// kind is "is", "inject" or "fault"; anything but a plain `is` is built per request (dynamic.go).
	kind      string
	inject    string             // the inject function's source
	fault     string             // the fault's name
	behaviors *behavior.Compiled // nil when the response has none
}

// responseKinds are the response types Mountebank knows.
var responseKinds = []string{"is", "proxy", "inject", "fault"}

// checkResponse returns Mountebank's dry-run error for a response config, or nil.
func checkResponse(r *config.Object) *config.Error {
	n := 0
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && v != nil {
			n++
		}
	}
	if n > 1 {
		return &config.Error{Code: config.CodeBadData, Message: "each response object must have only one response type", Source: r}
	}
	for _, k := range responseKinds {
		if v, ok := r.Get(k); ok && config.Truthy(v) {
			return nil
		}
	}
	return &config.Error{Code: config.CodeBadData, Message: "unrecognized response type", Source: r}
}

// compileResponse builds the wire form of an `is` response, falling back to the imposter's
// defaultResponse field by field as Mountebank's postProcess does.
func compileResponse(r *config.Object, def *config.Object, allowBinary bool) *response {
	is := config.AsObject(get(r, "is"))
	if is == nil {
		is = &config.Object{}
	}
	out := &response{config: r, is: is}
	if def == nil {
		def = &config.Object{}
	}

	status := get(is, "statusCode")
	if !config.Truthy(status) {
		status = get(def, "statusCode")
	}
	out.status, out.statusErr = statusCode(status)

	hv := get(is, "headers")
	if !config.Truthy(hv) {
		hv = get(def, "headers")
	}
	if ho := config.AsObject(hv); ho != nil {
		for _, m := range ho.Members {
			lower := strings.ToLower(m.Key)
			if lower == "connection" {
				out.hasConnection = true
			}
			if lower == "content-length" {
				out.hasContentLength = true
				continue // recomputed from the body, as Mountebank does
			}
			switch v := m.Value.(type) {
			case []any:
				for _, e := range v {
					out.headers = append(out.headers, header{name: m.Key, value: jsText(e)})
				}
			default:
				out.headers = append(out.headers, header{name: m.Key, value: jsText(v)})
			}
		}
		markSettable(out.headers)
	}

	body := get(is, "body")
	if !config.Truthy(body) {
		body = get(def, "body")
	}
	mode := get(is, "_mode")
	if !config.Truthy(mode) {
		mode = get(def, "_mode")
	}
	var text string
	switch b := body.(type) {
	case *config.Object, []any:
		text = string(config.MarshalJSON(b, 4))
	case nil:
		text = ""
	default:
		if config.Truthy(b) {
			text = jsText(b)
		}
	}
	if mode == "binary" {
		out.body = decodeBase64Loose(text)
	} else {
		out.body = []byte(text)
	}
	return out
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// statusCode converts a configured statusCode as node's writeHead does.
func statusCode(v config.Value) (int, error) {
	if v == nil || !config.Truthy(v) {
		return 200, nil
	}
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, fmt.Errorf("Invalid status code: %s", t)
		}
		f = n
	case bool:
		f = 1
	default:
		return 0, fmt.Errorf("Invalid status code: %s", jsText(v))
	}
	code := int(math.Trunc(f))
	if code < 100 || code > 999 {
		return 0, fmt.Errorf("Invalid status code: %s", jsText(v))
	}
	return code, nil
}

// jsText renders a JSON value as JavaScript's String(value).
var jsText = config.JSString

// decodeBase64Loose decodes base64 as node's Buffer.from(text, 'base64') does.
var decodeBase64Loose = config.DecodeBase64
