package proxy

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// ParseTo reads a proxy's `to` as Mountebank's dry run does: `new URL(String(to))` (the WHATWG
// URL parser, with no base), then, for a scheme starting with http, a path other than "/"
// refused. present says whether the proxy names `to` at all. The URL returned holds the
// scheme, host and port the parser reads (`http:x` is http://x, `HTTP://X:80` http://x); the
// error is Mountebank's, with no source (the caller names the stub).
func ParseTo(v config.Value, present bool) (*url.URL, *config.Error) {
	if !present {
		return nil, &config.Error{Code: config.CodeBadData, Message: "Missing to"}
	}
	input := jsvalue.String(v)
	w, ok := whatwgURL(input)
	if !ok {
		return nil, InvalidURL(input)
	}
	if strings.HasPrefix(w.scheme, "http") && w.pathname != "/" {
		return nil, &config.Error{Code: config.CodeBadData, Message: "proxy.to must not contain a path '" + w.pathname + "'"}
	}
	u := &url.URL{Scheme: w.scheme, Host: w.host}
	if w.port != "" {
		u.Host += ":" + w.port
	}
	return u, nil
}

// InvalidURL is node's TypeError for a URL it cannot parse, as Mountebank's API shows it: its
// code and input, no message (not an enumerable property).
func InvalidURL(input string) *config.Error {
	return &config.Error{Code: "ERR_INVALID_URL", Message: "Invalid URL", Input: &input}
}

// specialPorts are the WHATWG special schemes (file aside) and their default ports.
var specialPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

// whatwg is what whatwgURL reads of a URL: its scheme, host (for an IPv6 address, in
// brackets), port (none when it is the scheme's default) and pathname.
type whatwg struct{ scheme, host, port, pathname string }

// whatwgURL parses s as the WHATWG URL parser does with no base, for what a proxy's `to` holds,
// and reports false where the parser fails. It reads the scheme, the authority (user info, host,
// port) and the path (dot segments resolved; in a special URL backslashes are slashes, the
// characters the parser escapes escaped); queries and fragments are skipped.
func whatwgURL(s string) (whatwg, bool) {
	var w whatwg
	// Leading and trailing C0 controls and spaces go, and tabs and newlines anywhere.
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !isAlpha(s[0]) {
		return w, false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return w, false
		}
	}
	w.scheme = strings.ToLower(s[:colon])
	rest := s[colon+1:]
	defPort, special := specialPorts[w.scheme]
	file := w.scheme == "file"
	seps := "/?#"
	if special || file {
		seps = "/\\?#"
	}
	hasAuthority := true
	switch {
	case special:
		rest = strings.TrimLeft(rest, "/\\")
	case file:
		k := len(rest) - len(strings.TrimLeft(rest, "/\\"))
		hasAuthority = k >= 2
		rest = rest[min(k, 2):]
	case strings.HasPrefix(rest, "//"):
		rest = rest[2:]
	default:
		hasAuthority = false
	}
	if !hasAuthority {
		w.pathname = pathname(rest, seps, special || file, strings.HasPrefix(rest, "/") || file)
		return w, true
	}
	end := strings.IndexAny(rest, seps)
	if end < 0 {
		end = len(rest)
	}
	auth, tail := rest[:end], rest[end:]
	userinfo := false
	if file {
		if len(auth) == 2 && isAlpha(auth[0]) && (auth[1] == ':' || auth[1] == '|') {
			// A Windows drive letter where the host would be (file://c:/x): the parser reads it
			// as the path's first segment, with no host (the pathname is only approximated: a
			// file URL's is never read).
			w.pathname = "/" + auth[:1] + ":" + strings.TrimPrefix(pathname(tail, seps, true, true), "/")
			return w, true
		}
		// A file URL's host: no user info, no port.
		if auth != "" {
			h, ok := domain(auth)
			if !ok {
				return w, false
			}
			if h == "localhost" {
				h = ""
			}
			w.host = h
		}
		w.pathname = pathname(tail, seps, true, true)
		return w, true
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo, auth = true, auth[at+1:]
	}
	host := auth
	if strings.HasPrefix(auth, "[") {
		rb := strings.IndexByte(auth, ']')
		if rb < 0 {
			return w, false
		}
		ip, err := netip.ParseAddr(auth[1:rb])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return w, false
		}
		host = "[" + ipv6String(ip.As16()) + "]"
		after := auth[rb+1:]
		if after != "" && after[0] != ':' {
			return w, false
		}
		if after != "" {
			w.port = after[1:]
		}
	} else if c := strings.LastIndexByte(auth, ':'); c >= 0 {
		host, w.port = auth[:c], auth[c+1:]
		if host == "" {
			return w, false // a port without a host
		}
	}
	if w.port != "" {
		for i := 0; i < len(w.port); i++ {
			if w.port[i] < '0' || w.port[i] > '9' {
				return w, false
			}
		}
		n, err := strconv.Atoi(strings.TrimLeft(w.port, "0") + "0")
		if err != nil || n/10 > 65535 {
			return w, false
		}
		w.port = strconv.Itoa(n / 10)
		if w.port == defPort {
			w.port = ""
		}
	}
	if special {
		if host == "" {
			return w, false
		}
		if !strings.HasPrefix(host, "[") {
			var ok bool
			if host, ok = domain(host); !ok {
				return w, false
			}
		}
	} else if !strings.HasPrefix(host, "[") {
		for i := 0; i < len(host); i++ {
			if strings.IndexByte(" #/:<>?@[\\]^|", host[i]) >= 0 || host[i] < ' ' || host[i] == 0x7f {
				return w, false
			}
		}
		if host == "" && (userinfo || w.port != "") {
			return w, false
		}
	}
	w.host = host
	w.pathname = pathname(tail, seps, special, true)
	if !special && tail == "" || !special && tail[0] != '/' {
		w.pathname = ""
	}
	return w, true
}

// pathname reads the path at the start of tail (up to a query or fragment) as the WHATWG
// parser serializes it: in a special URL backslashes are slashes and an empty path is "/";
// a hierarchical path has its dot segments resolved and the characters of the path
// percent-encode set escaped; an opaque one (a non-special URL's without a slash) only its
// controls.
func pathname(tail, seps string, special, hierarchical bool) string {
	end := strings.IndexAny(tail, seps[len(seps)-2:])
	if end < 0 {
		end = len(tail)
	}
	path := tail[:end]
	if !hierarchical {
		return escape(path, "")
	}
	if special {
		path = strings.ReplaceAll(path, "\\", "/")
	}
	var out []string
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, seg := range segs {
		switch strings.ToLower(seg) {
		case ".", "%2e":
			if i == len(segs)-1 {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			} else if !special && i == len(segs)-1 {
				// A non-special URL whose path ends in a ".." with nothing left to remove keeps
				// an empty path, as node's parser (ada) does: new URL("foo://a/..").pathname is
				// "" (the standard's is "/").
				return ""
			}
			if i == len(segs)-1 {
				out = append(out, "")
			}
		default:
			out = append(out, escape(seg, "\"#<>?`{}"))
		}
	}
	if !special && path == "" {
		return ""
	}
	return "/" + strings.Join(out, "/")
}

// domain reads a special URL's host as the WHATWG parser does: percent-decoded, to ASCII
// (lower case), refused when empty or holding a forbidden code point, and read as an IPv4
// address when its last label is a number.
func domain(host string) (string, bool) {
	if host == "" {
		return "", false
	}
	if d, err := url.PathUnescape(host); err == nil {
		host = d
	}
	if !utf8.ValidString(host) { // decoded as UTF-8 with replacement, and U+FFFD is not allowed in a domain
		return "", false
	}
	ascii := strings.ToLower(host)
	if nonASCII(host) || strings.Contains(ascii, "xn--") {
		var err error
		if ascii, err = domainToASCII.ToASCII(host); err != nil {
			return "", false
		}
	}
	if ascii == "" {
		return "", false
	}
	for i := 0; i < len(ascii); i++ {
		if c := ascii[i]; c <= ' ' || c == 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return "", false
		}
	}
	labels := strings.Split(ascii, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	if !ipv4Number(labels[len(labels)-1]) {
		return ascii, true
	}
	// An IPv4 address: up to four numbers (decimal, 0x hex or 0 octal), the last filling the rest.
	if len(labels) > 4 {
		return "", false
	}
	var addr uint64
	for i, l := range labels {
		n, ok := ipv4Part(l)
		if !ok {
			return "", false
		}
		if i < len(labels)-1 {
			if n > 255 {
				return "", false
			}
			addr = addr<<8 | n
			continue
		}
		bits := uint(8 * (5 - len(labels)))
		if n >= 1<<bits {
			return "", false
		}
		addr = addr<<bits | n
	}
	return net.IPv4(byte(addr>>24), byte(addr>>16), byte(addr>>8), byte(addr)).String(), true
}

// domainToASCII is UTS #46 as the WHATWG URL parser applies it (domain to ASCII, beStrict
// false: hyphens and lengths unchecked).
var domainToASCII = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.CheckHyphens(false),
	idna.CheckJoiners(true), idna.BidiRule(), idna.StrictDomainName(false), idna.ValidateLabels(true))

func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// ipv4Number reports whether a host's label is a number (which makes the host an IPv4 address).
func ipv4Number(l string) bool {
	if l == "" {
		return false
	}
	if _, ok := ipv4Part(l); ok {
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// ipv4Part reads one number of an IPv4 address: decimal, 0x hexadecimal or 0 octal.
func ipv4Part(l string) (uint64, bool) {
	base := 10
	switch {
	case len(l) >= 2 && (l[:2] == "0x" || l[:2] == "0X"):
		l, base = l[2:], 16
		if l == "" {
			return 0, true
		}
	case len(l) > 1 && l[0] == '0':
		l, base = l[1:], 8
	}
	n, err := strconv.ParseUint(l, base, 64)
	if err != nil || n > 1<<32 {
		return 0, false
	}
	return n, true
}

// escape percent-encodes the C0 controls, space, bytes past ASCII and the bytes of set.
func escape(seg, set string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c < ' ' || c >= 0x7f || set != "" && (c == ' ' || strings.IndexByte(set, c) >= 0) {
			b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ipv6String prints an IPv6 address as the WHATWG URL serializer does: eight groups of
// lower-case hex without leading zeros, the first longest run of two or more zero groups
// written "::", and an embedded IPv4 address in hex too (node prints [::ffff:1.2.3.4] as
// [::ffff:102:304], where Go's String keeps the dotted form).
func ipv6String(b [16]byte) string {
	var g [8]uint16
	for i := range g {
		g[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if g[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && g[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == best {
			sb.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != best+bestLen {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(g[i]), 16))
	}
	return sb.String()
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
