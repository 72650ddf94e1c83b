package dashboard

import (
	"strings"
)

// WantsHTML reports whether a request with this Accept header gets a page rather than JSON on
// the routes Mountebank answers with Express's res.format({json, html}): the client must accept
// text/html and not prefer application/json. No header, "*/*", "application/json" and an equal
// preference for both ("application/json, text/html") all stay JSON, as in Mountebank; a
// browser's "text/html,…,*/*;q=0.8" gets the page.
//
// It follows the negotiator package Express uses: each type takes its most specific matching
// Accept entry (then the highest q, then the latest entry); the types are ranked by q, then
// specificity, then the position of their entry, then JSON first.
func WantsHTML(accept []byte) bool {
	if len(accept) == 0 {
		return false
	}
	specs := parseAccept(string(accept))
	j := priority("application", "json", specs, 0)
	h := priority("text", "html", specs, 1)
	if !(h.q > 0) { // NaN too
		return false
	}
	if !(j.q > 0) {
		return true
	}
	return less(h, j)
}

// mediaRange is one entry of an Accept header.
type mediaRange struct {
	typ, sub string
	params   [][2]string // lowercased keys, before q
	q        float64
	i        int // position in the header
}

// prio is how well a provided type matches an Accept header (negotiator's {o, q, s, i}).
type prio struct {
	o int     // position of the entry that matched
	q float64 // its quality
	s int     // its specificity: 4 type, 2 subtype, 1 parameters
	i int     // position of the provided type
}

func less(a, b prio) bool {
	switch {
	case a.q != b.q:
		return a.q > b.q
	case a.s != b.s:
		return a.s > b.s
	case a.o != b.o:
		return a.o < b.o
	}
	return a.i < b.i
}

func parseAccept(h string) []mediaRange {
	var out []mediaRange
	for i, part := range splitQuoted(h, ',') {
		if m, ok := parseRange(strings.TrimSpace(part), i); ok {
			out = append(out, m)
		}
	}
	return out
}

// parseRange parses "type/subtype;k=v;q=0.5" as negotiator's simpleMediaTypeRegExp does.
func parseRange(s string, i int) (mediaRange, bool) {
	m := mediaRange{q: 1, i: i}
	parts := splitQuoted(s, ';')
	s = strings.TrimRight(parts[0], " \t")
	slash := strings.IndexByte(s, '/')
	if slash <= 0 || slash == len(s)-1 {
		return m, false
	}
	m.typ, m.sub = s[:slash], s[slash+1:]
	if strings.ContainsAny(m.typ, " \t/") || strings.ContainsAny(m.sub, " \t") {
		return m, false
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if k == "q" {
			m.q = parseFloatPrefix(v)
			break
		}
		m.params = append(m.params, [2]string{k, v})
	}
	return m, true
}

// priority is negotiator's getMediaTypePriority for a provided type without parameters.
func priority(typ, sub string, specs []mediaRange, index int) prio {
	best := prio{o: -1, i: index}
	for _, m := range specs {
		s := 0
		switch {
		case strings.EqualFold(m.typ, typ):
			s |= 4
		case m.typ != "*":
			continue
		}
		switch {
		case strings.EqualFold(m.sub, sub):
			s |= 2
		case m.sub != "*":
			continue
		}
		if len(m.params) > 0 {
			ok := true
			for _, p := range m.params {
				if p[1] != "*" && p[1] != "" {
					ok = false
				}
			}
			if !ok {
				continue
			}
			s |= 1
		}
		if best.s != s {
			if s < best.s {
				continue
			}
		} else if best.q != m.q {
			if !(m.q > best.q) {
				continue
			}
		} else if m.i <= best.o {
			continue
		}
		best = prio{o: m.i, q: m.q, s: s, i: index}
	}
	return best
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseFloatPrefix is JavaScript's parseFloat for the decimal forms a q value takes; anything
// else is NaN-like (returned as -1, which no comparison prefers).
func parseFloatPrefix(s string) float64 {
	end, dot, digits := 0, false, 0
	for end < len(s) {
		c := s[end]
		if c >= '0' && c <= '9' {
			digits++
		} else if c == '.' && !dot {
			dot = true
		} else {
			break
		}
		end++
	}
	if digits == 0 {
		return -1
	}
	var v, scale float64 = 0, 1
	seenDot := false
	for _, c := range s[:end] {
		if c == '.' {
			seenDot = true
			continue
		}
		if seenDot {
			scale /= 10
			v += float64(c-'0') * scale
		} else {
			v = v*10 + float64(c-'0')
		}
	}
	return v
}
