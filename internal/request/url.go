package request

import (
	"strings"
	"unsafe"

	"github.com/mockd/mockd/internal/jsvalue"
)

// nodeURL splits a request target into the pathname and the query string (without '?')
// that node's new URL(target, "http://localhost") gives: dot segments
// resolved, backslashes read as slashes, characters outside the path set
// percent-encoded, and existing percent-encoding kept. With own set, target is memory
// owned by the request (its arena, never written again), and the results may share it.
func nodeURL(target []byte, own bool) (path, search string) {
	if path, search, ok := plainURL(target, own); ok {
		return path, search
	}
	return resolveURL(target, own)
}

// plainPathByte marks the bytes a path keeps as they are and that need no resolving: not
// escaped, not a slash or percent sign.
var plainPathByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = !pathEscape(b) && b != '\\' && b != '%' && b != '/'
	}
	return t
}()

// plainURL is nodeURL for the common request target, "/a/b?q", that resolves to itself: one
// pass over it, and ok is false when any part needs resolveURL.
func plainURL(target []byte, own bool) (path, search string, ok bool) {
	if len(target) == 0 || target[0] != '/' || len(target) > 1 && isSlash(target[1]) {
		return "", "", false // "//host/..." names an authority
	}
	i, dotSeg := 1, false
	for i < len(target) {
		c := target[i]
		if !plainPathByte[c] && c != '/' {
			break
		}
		if c == '.' && target[i-1] == '/' {
			dotSeg = true // "." or ".." maybe: resolvePath decides
		}
		i++
	}
	if dotSeg {
		return "", "", false
	}
	if i < len(target) {
		if target[i] != '?' {
			return "", "", false
		}
		for _, c := range target[i+1:] {
			if c <= ' ' || c == '#' {
				return "", "", false // stripped, removed or a fragment
			}
		}
		search = view(target[i+1:], own)
	}
	return view(target[:i], own), search, true
}

// resolveURL is nodeURL for any target.
func resolveURL(target []byte, own bool) (path, search string) {
	// Leading and trailing C0 controls and spaces are stripped; tabs and
	// newlines anywhere are removed.
	start, end := 0, len(target)
	for start < end && target[start] <= ' ' {
		start++
	}
	for end > start && target[end-1] <= ' ' {
		end--
	}
	t := target[start:end]
	if hasTabOrNewline(t) {
		c := make([]byte, 0, len(t))
		for _, b := range t {
			if b != '\t' && b != '\n' && b != '\r' {
				c = append(c, b)
			}
		}
		t, own = c, true
	}

	// Fragment and query.
	frag := len(t)
	for i, b := range t {
		if b == '#' {
			frag = i
			break
		}
	}
	t = t[:frag]
	q := -1
	for i, b := range t {
		if b == '?' {
			q = i
			break
		}
	}
	if q >= 0 {
		search = view(t[q+1:], own)
		t = t[:q]
	}

	if n := schemeLen(t); n > 0 {
		scheme := strings.ToLower(string(t[:n]))
		rest := t[n+1:]
		if !isSpecialScheme(scheme) {
			// Opaque path of a non-special URL.
			return view(rest, own), search
		}
		if scheme == "http" && !(len(rest) > 0 && isSlash(rest[0])) {
			// "http:foo" is relative to the (http) base.
			return resolvePath(rest, true, own), search
		}
		for len(rest) > 0 && isSlash(rest[0]) {
			rest = rest[1:]
		}
		return resolvePath(skipAuthority(rest), false, own), search
	}
	if len(t) >= 2 && isSlash(t[0]) && isSlash(t[1]) {
		return resolvePath(skipAuthority(t[2:]), false, own), search
	}
	return resolvePath(t, len(t) == 0 || !isSlash(t[0]), own), search
}

// view returns b as a string: sharing b's memory when own is set (b is never written
// again), else a copy.
func view(b []byte, own bool) string {
	if !own {
		return string(b)
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func hasTabOrNewline(b []byte) bool {
	for _, c := range b {
		if c == '\t' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

func isSlash(b byte) bool { return b == '/' || b == '\\' }

func isSpecialScheme(s string) bool {
	switch s {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// schemeLen returns the length of a leading URL scheme followed by ':', or 0.
func schemeLen(t []byte) int {
	if len(t) == 0 || !isAlpha(t[0]) {
		return 0
	}
	for i := 1; i < len(t); i++ {
		c := t[i]
		switch {
		case c == ':':
			return i
		case isAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.':
		default:
			return 0
		}
	}
	return 0
}

func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func skipAuthority(t []byte) []byte {
	for i, c := range t {
		if isSlash(c) {
			return t[i:]
		}
	}
	return nil
}

// resolvePath applies the WHATWG path state to t: relative paths resolve
// against "/", "." and ".." segments (also percent-encoded) are resolved.
func resolvePath(t []byte, relative, own bool) string {
	var full []byte // t with its leading '/', when it has one
	if !relative && len(t) > 0 && isSlash(t[0]) {
		if t[0] == '/' {
			full = t
		}
		t = t[1:]
	}
	if len(t) == 0 {
		return "/"
	}
	fast := true
	for _, c := range t {
		if c == '\\' || c == '.' || c == '%' || pathEscape(c) {
			fast = false
			break
		}
	}
	if fast {
		if full != nil {
			return view(full, own)
		}
		return "/" + string(t)
	}
	segs := make([]string, 0, 8)
	for {
		i := 0
		for i < len(t) && !isSlash(t[i]) {
			i++
		}
		seg := t[:i]
		last := i == len(t)
		switch {
		case isDoubleDot(seg):
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			if last {
				segs = append(segs, "")
			}
		case isSingleDot(seg):
			if last {
				segs = append(segs, "")
			}
		default:
			segs = append(segs, escapePathSegment(seg))
		}
		if last {
			break
		}
		t = t[i+1:]
	}
	return "/" + strings.Join(segs, "/")
}

func isSingleDot(s []byte) bool {
	return string(s) == "." || strings.EqualFold(string(s), "%2e")
}

func isDoubleDot(s []byte) bool {
	switch len(s) {
	case 2:
		return string(s) == ".."
	case 4:
		l := strings.ToLower(string(s))
		return l == ".%2e" || l == "%2e."
	case 6:
		return strings.EqualFold(string(s), "%2e%2e")
	}
	return false
}

func pathEscape(c byte) bool {
	switch c {
	case ' ', '"', '#', '<', '>', '?', '`', '{', '}':
		return true
	}
	return c < 0x20 || c >= 0x7F
}

func escapePathSegment(s []byte) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		if pathEscape(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ParseQuery appends to dst the pairs of s (the names and values may share
// its memory) decoded as node's
// querystring.parse decodes them: pieces split on '&' (only the first 1000
// pieces count), name and value split on the first '=', '+' read as a space,
// %xx decoded (invalid escapes kept), order kept. Empty pieces are skipped.
func ParseQuery(dst []KV, s string) []KV {
	if len(s) <= shortQuery {
		return parseShortQuery(dst, s)
	}
	return parseQuery(dst, s)
}

// shortQuery is the longest query string parseShortQuery reads (a byte at a time); a longer
// one is cut at its '&' and '=' by IndexByte.
const shortQuery = 64

// parseShortQuery is ParseQuery for a short query string (the usual ?q=x): one loop over each
// piece finds its end, its first '=' and whether its name or value holds a '%' or a '+', where
// parseQuery makes two IndexByte calls and then looks at the name and the value again. (A
// short string has fewer pieces than parseQuery's limit.)
func parseShortQuery(dst []KV, s string) []KV {
	for i := 0; i < len(s); {
		start, eq, esc := i, -1, 0 // esc: 1 the name, 2 the value holds '%' or '+'
		for ; i < len(s) && s[i] != '&'; i++ {
			switch s[i] {
			case '=':
				if eq < 0 {
					eq = i
				}
			case '%', '+':
				if eq < 0 {
					esc |= 1
				} else {
					esc |= 2
				}
			}
		}
		end := i
		i++ // past the '&'
		if end == start {
			continue
		}
		name, value := s[start:end], ""
		if eq >= 0 {
			name, value = s[start:eq], s[eq+1:end]
		}
		if esc&1 != 0 {
			name = qsUnescape(name)
		}
		if esc&2 != 0 {
			value = qsUnescape(value)
		}
		dst = append(dst, KV{name, value})
	}
	return dst
}

// parseQuery is ParseQuery for any query string.
func parseQuery(dst []KV, s string) []KV {
	const maxKeys = 1000
	pieces := 0
	for len(s) > 0 && pieces < maxKeys {
		pieces++
		i := strings.IndexByte(s, '&')
		var piece string
		if i < 0 {
			piece, s = s, ""
		} else {
			piece, s = s[:i], s[i+1:]
		}
		if piece == "" {
			continue
		}
		name, value := piece, ""
		if j := strings.IndexByte(piece, '='); j >= 0 {
			name, value = piece[:j], piece[j+1:]
		}
		dst = append(dst, KV{qsUnescape(name), qsUnescape(value)})
	}
	return dst
}

func qsUnescape(s string) string {
	if !needsUnescape(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return jsvalue.DecodeUTF8(b)
}

// needsUnescape reports whether s holds a '%' or a '+': a short name or value (most) is
// looked at in one loop, a long one by two IndexByte.
func needsUnescape(s string) bool {
	if len(s) > 16 {
		return strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '+') >= 0
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c == '+' {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || ((c|0x20) >= 'a' && (c|0x20) <= 'f')
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}
