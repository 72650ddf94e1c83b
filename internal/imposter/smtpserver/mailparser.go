package smtpserver

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// This file follows the parts of Mountebank's mail parser (mailparser 3 with nodemailer's
// addressparser and libmime) that shape the recorded addresses and encoded words, written
// plainly to be read side by side with them.

// mailAddress is one entry of addressparser's list: an address with its name, or a group
// (`Name: a@x, b@y;`) with the addresses in it.
type mailAddress struct {
	name, address string
	isGroup       bool
	group         []*mailAddress
}

// object is the entry as Mountebank records it.
func (a *mailAddress) object() *config.Object {
	if a.isGroup {
		list := make([]any, 0, len(a.group))
		for _, g := range a.group {
			list = append(list, g.object())
		}
		return config.NewObject("name", a.name, "group", list)
	}
	return config.NewObject("address", a.address, "name", a.name)
}

// addrToken is a token of addressparser's Tokenizer: an operator or text.
type addrToken struct {
	operator bool
	value    string
}

// addrOperators maps each operator to the one that ends its sequence.
var addrOperators = map[rune]rune{'"': '"', '(': ')', '<': '>', ',': 0, ':': ';', ';': 0}

// tokenizeAddresses is addressparser's Tokenizer.tokenize.
func tokenizeAddresses(s string) []addrToken {
	var list []*addrToken
	var node *addrToken
	var expecting rune
	escaped := false
	for _, c := range s {
		if !escaped {
			if expecting != 0 && c == expecting {
				list = append(list, &addrToken{operator: true, value: string(c)})
				node, expecting = nil, 0
				continue
			}
			if end, ok := addrOperators[c]; ok && expecting == 0 {
				list = append(list, &addrToken{operator: true, value: string(c)})
				node, expecting = nil, end
				continue
			}
			if (expecting == '"' || expecting == '\'') && c == '\\' {
				escaped = true
				continue
			}
		}
		if node == nil {
			node = &addrToken{}
			list = append(list, node)
		}
		if c == '\n' {
			c = ' '
		}
		if c >= 0x21 || c == ' ' || c == '\t' {
			node.value += string(c)
		}
		escaped = false
	}
	out := make([]addrToken, 0, len(list))
	for _, t := range list {
		t.value = strings.TrimFunc(t.value, jsSpace)
		if t.value != "" {
			out = append(out, *t)
		}
	}
	return out
}

// jsSpace is JavaScript's white space (String.prototype.trim, \s).
func jsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// parseAddresses is nodemailer's addressparser(str).
func parseAddresses(s string) []*mailAddress {
	var groups [][]addrToken
	var cur []addrToken
	for _, t := range tokenizeAddresses(s) {
		if t.operator && (t.value == "," || t.value == ";") {
			if len(cur) > 0 {
				groups = append(groups, cur)
			}
			cur = nil
		} else {
			cur = append(cur, t)
		}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	var out []*mailAddress
	for _, g := range groups {
		out = append(out, handleAddress(g)...)
	}
	return out
}

var (
	reLeadingAngle = regexp.MustCompile(`^[^<]*<\s*`)
	reWholeAddress = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)
	reInnerAddress = regexp.MustCompile(`\s*\b[^@\s]+@[^\s]+\b\s*`)
)

// handleAddress is addressparser's _handleAddress: the tokens of one address (or group).
func handleAddress(tokens []addrToken) []*mailAddress {
	state := "text"
	isGroup := false
	data := map[string][]string{}
	for _, t := range tokens {
		if t.operator {
			switch t.value {
			case "<":
				state = "address"
			case "(":
				state = "comment"
			case ":":
				state, isGroup = "group", true
			default:
				state = "text"
			}
			continue
		}
		v := t.value
		if state == "address" {
			v = reLeadingAngle.ReplaceAllString(v, "")
		}
		data[state] = append(data[state], v)
	}
	if len(data["text"]) == 0 && len(data["comment"]) > 0 {
		data["text"], data["comment"] = data["comment"], nil
	}
	if isGroup {
		g := &mailAddress{name: strings.Join(data["text"], " "), isGroup: true, group: []*mailAddress{}}
		if len(data["group"]) > 0 {
			g.group = parseAddresses(strings.Join(data["group"], ","))
		}
		return []*mailAddress{g}
	}
	text, address := data["text"], data["address"]
	if len(address) == 0 && len(text) > 0 {
		for i := len(text) - 1; i >= 0; i-- {
			if reWholeAddress.MatchString(text[i]) {
				address = []string{text[i]}
				text = append(text[:i:i], text[i+1:]...)
				break
			}
		}
		if len(address) == 0 {
			for i := len(text) - 1; i >= 0; i-- {
				if loc := reInnerAddress.FindStringIndex(text[i]); loc != nil {
					address = []string{strings.TrimFunc(text[i][loc[0]:loc[1]], jsSpace)}
					text[i] = strings.TrimFunc(text[i][:loc[0]]+" "+text[i][loc[1]:], jsSpace)
					break
				}
			}
		}
	}
	if len(text) == 0 && len(data["comment"]) > 0 {
		text = data["comment"]
	}
	if len(address) > 1 {
		text = append(append([]string(nil), text...), address[1:]...)
		address = address[:1]
	}
	t, a := strings.Join(text, " "), strings.Join(address, " ")
	out := &mailAddress{address: a, name: t}
	if out.address == "" {
		out.address = t
	}
	if out.name == "" {
		out.name = a
	}
	if out.address == out.name {
		if strings.Contains(out.address, "@") {
			out.name = ""
		} else {
			out.address = ""
		}
	}
	return []*mailAddress{out}
}

var reBWordsOnly = regexp.MustCompile(`^(=\?([^?]+)\?[Bb]\?[^?]*\?=)(\s*=\?([^?]+)\?[Bb]\?[^?]*\?=)*$`)

// decodeAddresses is mailparser's decodeAddresses: names are trimmed and their encoded words
// decoded; an entry without an address whose name is all base64 encoded words is parsed
// again from the decoded text, its entries moved to the end of the list.
func decodeAddresses(list []*mailAddress) []*mailAddress {
	reparsed := map[*mailAddress]bool{}
	for i := 0; i < len(list); i++ {
		a := list[i]
		a.name = strings.TrimFunc(a.name, jsSpace)
		if !a.isGroup && a.address == "" && reBWordsOnly.MatchString(a.name) && !reparsed[a] {
			for _, e := range parseAddresses(decodeWords(a.name)) {
				reparsed[e] = true
				list = append(list, e)
			}
			list = append(list[:i:i], list[i+1:]...)
			i--
			continue
		}
		if a.name != "" {
			a.name = decodeWords(a.name)
		}
		if a.isGroup {
			a.group = decodeAddresses(a.group)
		}
	}
	return list
}

// firstAddress is what Mountebank records of an address header: the first entry of
// mailparser's list (`address.value[0]`), or nil when the list is empty.
func firstAddress(v string) *config.Object {
	list := decodeAddresses(parseAddresses(jsvalue.DecodeUTF8(v)))
	if len(list) == 0 {
		return nil
	}
	return list[0].object()
}

var (
	reJoinB      = regexp.MustCompile(`(=\?([^?]+)\?[Bb]\?[^?]*\?=)\s*(=\?([^?]+)\?[Bb]\?[^?]*\?=)`)
	reJoinQ      = regexp.MustCompile(`(=\?([^?]+)\?[Qq]\?[^?]*\?=)\s*(=\?([^?]+)\?[Qq]\?[^?]*\?=)`)
	reJoinMarker = regexp.MustCompile(`(\?=)?__\x00JOIN\x00__(=\?([^?]+)\?[QqBb]\?)?`)
	reWordSpace  = regexp.MustCompile(`(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(=\?[^?]+\?[QqBb]\?[^?]*\?=)`)
	reWord       = regexp.MustCompile(`=\?([\w_\-*]+)\?([QqBb])\?([^?]*)\?=`)
	reQSoftSpace = regexp.MustCompile(`=\s+([0-9a-fA-F])`)
	reQSpace     = regexp.MustCompile(`[_\s]`)
)

// decodeWords is libmime's decodeWords: adjacent encoded words of one charset and encoding
// are joined before they are decoded (a character split between two words decodes whole),
// white space between encoded words is dropped, and each word is decoded by decodeWord.
func decodeWords(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	s = markJoins(s, reJoinB)
	s = markJoins(s, reJoinQ)
	s = reJoinMarker.ReplaceAllString(s, "")
	s = replaceLookahead(s, reWordSpace, 2, func(m []string) string { return m[1] })
	return reWord.ReplaceAllStringFunc(s, func(w string) string {
		m := reWord.FindStringSubmatch(w)
		return decodeWord(m[1], m[2], m[3])
	})
}

// markJoins marks, as libmime's lookahead replacement does, each encoded word followed
// (after white space) by another of the same charset.
func markJoins(s string, re *regexp.Regexp) string {
	return replaceLookahead(s, re, 3, func(m []string) string {
		if normalizeCharset(m[2]) == normalizeCharset(m[4]) {
			return m[1] + "__\x00JOIN\x00__"
		}
		return m[0][:len(m[0])-len(m[3])]
	})
}

// replaceLookahead replaces the matches of re, whose group ahead is a lookahead in the
// JavaScript original (matched but not consumed), with what f makes of them (without it).
func replaceLookahead(s string, re *regexp.Regexp, ahead int, f func(m []string) string) string {
	var b strings.Builder
	for {
		loc := re.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		b.WriteString(s[:loc[0]])
		b.WriteString(f(m))
		s = s[loc[2*ahead]:]
	}
}

// decodeWord is libmime's decodeWord.
func decodeWord(charset, encoding, text string) string {
	if i := strings.IndexByte(charset, '*'); i >= 0 {
		charset = charset[:i]
	}
	charset = normalizeCharset(charset)
	var buf []byte
	switch strings.ToUpper(encoding) {
	case "Q":
		text = reQSoftSpace.ReplaceAllString(text, "=$1")
		text = reQSpace.ReplaceAllString(text, " ")
		in := []byte(text)
		for i := 0; i < len(in); i++ {
			c := in[i]
			if i <= len(in)-2 && c == '=' && i+2 < len(in) && hexDigit(in[i+1]) && hexDigit(in[i+2]) {
				buf = append(buf, unhex(in[i+1])<<4|unhex(in[i+2]))
				i += 2
				continue
			}
			buf = append(buf, c)
		}
	case "B":
		for _, part := range strings.Split(text, "=") {
			if part != "" {
				buf = append(buf, config.DecodeBase64(part)...)
			}
		}
	}
	return decodeCharset(buf, charset)
}

func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

var reUTF8Charset = regexp.MustCompile(`(?i)^(us-)?ascii|utf-8|7bit$`)

// decodeCharset is libmime's charset.decode: UTF-8 as node decodes it, a charset the WHATWG
// labels know (libmime's table) through its decoder, anything else as UTF-8.
func decodeCharset(b []byte, charset string) string {
	if reUTF8Charset.MatchString(charset) {
		return jsvalue.DecodeUTF8(b)
	}
	if enc, err := htmlindex.Get(charset); err == nil {
		if out, err := enc.NewDecoder().Bytes(b); err == nil && utf8.Valid(out) {
			return string(out)
		}
	}
	return jsvalue.DecodeUTF8(b)
}

// normalizeCharset is libmime's normalizeCharset, to the degree mockd's decoders need: the
// WHATWG name of a label they know, the label upper-cased otherwise.
func normalizeCharset(charset string) string {
	c := strings.ToLower(strings.TrimFunc(charset, jsSpace))
	if enc, err := htmlindex.Get(c); err == nil {
		if name, err := htmlindex.Name(enc); err == nil {
			return strings.ToUpper(name)
		}
	}
	return strings.ToUpper(c)
}

var reContinuation = regexp.MustCompile(`\*((\d+)\*?)?$`)
var reExtValue = regexp.MustCompile(`^([^']*)'[^']*'(.*)$`)
var reExtUnsafe = regexp.MustCompile(`[=?_\s]`)

// parseHeaderValue is libmime's parseHeaderValue, the lenient reading of a Content-Type or
// Content-Disposition (`value; key=value; key="quoted"`, RFC 2231 continuations and charsets)
// mailparser applies; the value comes back lower-cased, as mailparser uses it. A quote left
// open, a stray quote inside a value (`name="x"y.txt"` is x"y.txt without its quotes) or a
// key without a value are read as libmime reads them, where mime.ParseMediaType fails.
func parseHeaderValue(s string) (value string, params map[string]string) {
	params = map[string]string{}
	var key, cur strings.Builder
	haveKey, inKey := false, false
	var quote rune
	escaped := false
	for _, c := range s {
		if inKey {
			if c == '=' {
				k := strings.ToLower(strings.TrimFunc(cur.String(), jsSpace))
				key.Reset()
				key.WriteString(k)
				haveKey, inKey = true, false
				cur.Reset()
				continue
			}
			cur.WriteRune(c)
			continue
		}
		switch {
		case escaped:
			cur.WriteRune(c)
		case c == '\\':
			escaped = true
			continue
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && c == '"':
			quote = c
		case quote == 0 && c == ';':
			v := strings.TrimFunc(cur.String(), jsSpace)
			if !haveKey {
				value = v
			} else {
				params[key.String()] = v
			}
			inKey = true
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
		escaped = false
	}
	v := strings.TrimFunc(cur.String(), jsSpace)
	switch {
	case !inKey && !haveKey:
		value = v
	case !inKey:
		params[key.String()] = v
	case v != "":
		params[strings.ToLower(v)] = ""
	}
	// RFC 2231 continuations (name*0, name*1*) and charsets (name*=utf-8''%C3%A9).
	type piece struct {
		nr    int
		value string
	}
	type joined struct {
		charset string
		values  []piece
	}
	var cont map[string]*joined
	var order []string
	for _, k := range sortedKeys(params) {
		m := reContinuation.FindStringSubmatchIndex(k)
		if m == nil {
			continue
		}
		actual := strings.ToLower(k[:m[0]])
		nr := 0
		if m[4] >= 0 {
			for _, d := range k[m[4]:m[5]] {
				nr = nr*10 + int(d-'0')
			}
		}
		if cont == nil {
			cont = map[string]*joined{}
		}
		j := cont[actual]
		if j == nil {
			j = &joined{}
			cont[actual] = j
			order = append(order, actual)
		}
		pv := params[k]
		if nr == 0 && strings.HasSuffix(k, "*") {
			if em := reExtValue.FindStringSubmatch(pv); em != nil {
				j.charset = em[1]
				if j.charset == "" {
					j.charset = "utf-8"
				}
				pv = em[2]
			}
		}
		j.values = append(j.values, piece{nr, pv})
		delete(params, k)
	}
	for _, k := range order {
		j := cont[k]
		sortPieces := j.values
		for a := 1; a < len(sortPieces); a++ {
			for b := a; b > 0 && sortPieces[b].nr < sortPieces[b-1].nr; b-- {
				sortPieces[b], sortPieces[b-1] = sortPieces[b-1], sortPieces[b]
			}
		}
		var b strings.Builder
		for _, p := range sortPieces {
			b.WriteString(p.value)
		}
		v := b.String()
		if j.charset != "" {
			v = reExtUnsafe.ReplaceAllStringFunc(v, func(s string) string {
				if s == " " {
					return "_"
				}
				return "%" + strings.ToLower(strconvHex(s[0]))
			})
			v = decodeWords("=?" + j.charset + "?Q?" + strings.ReplaceAll(v, "%", "=") + "?=")
		} else {
			v = decodeWords(v)
		}
		params[k] = v
	}
	return strings.ToLower(value), params
}

func strconvHex(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// sortedKeys returns m's keys in order (Go maps have none; libmime walks them in insertion
// order, which only matters for continuations of one name, sorted by number anyway).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for a := 1; a < len(keys); a++ {
		for b := a; b > 0 && keys[b] < keys[b-1]; b-- {
			keys[b], keys[b-1] = keys[b-1], keys[b]
		}
	}
	return keys
}
