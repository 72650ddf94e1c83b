package smtpserver

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestFirstAddress: what Mountebank 2.9.1 (mailparser, nodemailer's addressparser) recorded for
// these address headers.
func TestFirstAddress(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a@x.com", `{"address":"a@x.com","name":""}`},
		{`"C, D" <c@z.net>, e@x.com`, `{"address":"c@z.net","name":"C, D"}`},
		{"h@x.com (comment)", `{"address":"h@x.com","name":"comment"}`},
		{"Grp: a@x.com, B <b@y.org>;", `{"name":"Grp","group":[{"address":"a@x.com","name":""},{"address":"b@y.org","name":"B"}]}`},
		{"undisclosed-recipients:;, e@x.com", `{"name":"undisclosed-recipients","group":[]}`},
		{"=?utf-8?B?w6lsw6g=?= <f@x.com>", `{"address":"f@x.com","name":"élè"}`},
		{"=?iso-8859-1?Q?J=F6rg?= <j@x.de>", `{"address":"j@x.de","name":"Jörg"}`},
		{"<g@x.com>", `{"address":"g@x.com","name":""}`},
		{"just text", `{"address":"","name":"just text"}`},
		{"", ``},
	} {
		got := ""
		if a := firstAddress(tc.in); a != nil {
			got = string(config.MarshalJSON(a, 0))
		}
		if got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestDecodeWords: libmime's decodeWords, as Mountebank 2.9.1 recorded these subjects.
func TestDecodeWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"=?utf-8?q?a?= =?utf-8?q?b?= c", "ab c"},
		{"=?bogus?q?x?=", "x"},
		{"=?UTF-8?B?w6nDqM?= =?UTF-8?B?OgIGI=?=", "éèà b"},
		{"=?utf-8?B?invalid!?=", "\ufffd{ږ'"},
		{"=?iso-2022-jp?B?GyRCJEMbKEI=?= and =?windows-1252?Q?=80?=", "っ and €"},
		{"=?utf-8?q?caf=C3=A9?=", "café"},
	} {
		if got := decodeWords(tc.in); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseHeaderValue: libmime's lenient reading of Content-Type and Content-Disposition.
func TestParseHeaderValue(t *testing.T) {
	for _, tc := range []struct {
		in, value, key, param string
	}{
		{`Text/Plain; charset="utf-8"`, "text/plain", "charset", "utf-8"},
		{`application/octet-stream; name="x"y.txt"`, "application/octet-stream", "name", "xy.txt"},
		{`attachment; filename*=utf-8''%C3%A9t%C3%A9.csv`, "attachment", "filename", "été.csv"},
		{`attachment; filename*0="long"; filename*1="name.txt"`, "attachment", "filename", "longname.txt"},
		{`inline; flag`, "inline", "flag", ""},
	} {
		v, params := parseHeaderValue(tc.in)
		if p, ok := params[tc.key]; v != tc.value || !ok || p != tc.param {
			t.Errorf("%q: %q %v, want %q with %s=%q", tc.in, v, params, tc.value, tc.key, tc.param)
		}
	}
}
