package httpserver

import "github.com/valyala/fasthttp"

// nodeReasons are the reason phrases of node's http.STATUS_CODES (what Mountebank sends) where
// fasthttp's differ; node sends "unknown" for a code it has no phrase for.
var nodeReasons = map[int]string{
	413: "Payload Too Large",
	414: "URI Too Long",
	416: "Range Not Satisfiable",
	418: "I'm a Teapot",
	425: "Too Early",
	509: "Bandwidth Limit Exceeded",
}

// reasonOverride holds, by status code, the reason phrase to send instead of fasthttp's; nil
// where they agree. Indexed on the hot path, so a request pays no map lookup.
var reasonOverride = func() (out [1000][]byte) {
	for code := 100; code < len(out); code++ {
		switch r, ok := nodeReasons[code]; {
		case ok:
			out[code] = []byte(r)
		case fasthttp.StatusMessage(code) == "Unknown Status Code":
			out[code] = []byte("unknown")
		}
	}
	return out
}()

// setStatus sets the status code and, where node's phrase differs from fasthttp's, its reason.
func setStatus(h *fasthttp.ResponseHeader, code int) {
	h.SetStatusCode(code)
	if code >= 0 && code < len(reasonOverride) && reasonOverride[code] != nil {
		h.SetStatusMessage(reasonOverride[code])
	}
}

// reasonOf is node's reason phrase for code.
func reasonOf(code int) []byte {
	if code >= 0 && code < len(reasonOverride) && reasonOverride[code] != nil {
		return reasonOverride[code]
	}
	return []byte(fasthttp.StatusMessage(code))
}
