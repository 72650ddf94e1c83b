package admin

import (
	"strconv"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

// appendPrinted appends im's JSON as the admin API sends it: config.AppendJSON(printImposter(im,
// opts), 2), written by appendImposter.
func appendPrinted(dst []byte, im *imposter.Imposter, opts PrintOptions) []byte {
	var reqs config.Value
	if !opts.List && !opts.Replayable {
		reqs = requestList(im, opts.Explain)
	}
	return appendImposter(dst, im, im.Stubs(!opts.Replayable), reqs, opts)
}

// appendImposter appends im's JSON as the admin API sends it, config.AppendJSON(printStubs(im,
// stubs, opts), 2) byte for byte, written straight from the imposter: the members printStubs
// sets are written as it orders them, with the line breaks and spaces of an indentation of 2,
// and each stub kept as text is indented from that text (unpacked once) rather than through
// an ordered tree that is printed afterwards. reqs is requestList(im, opts.Explain), or nil
// with opts.List or opts.Replayable (which show no requests). A custom protocol's imposter,
// whose program's metadata may name any member, is printed through printStubs.
func appendImposter(dst []byte, im *imposter.Imposter, stubs imposter.Stubs, reqs config.Value, opts PrintOptions) []byte {
	if im.Custom() || im.Metadata() != nil {
		return config.AppendJSON(dst, printStubs(im, stubs, opts), 2)
	}
	def := im.Definition()
	dst = append(dst, "{\n  \"protocol\": "...)
	dst = config.AppendString(dst, def.Protocol)
	dst = append(dst, ",\n  \"port\": "...)
	dst = strconv.AppendInt(dst, int64(im.Port()), 10)
	if n, ok := def.Header.Get("name"); ok && jsvalue.Truthy(n) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"name\": "...), n, 2, 1)
	}
	if dr, ok := def.Header.Get("defaultResponse"); ok && jsvalue.Truthy(dr) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"defaultResponse\": "...), dr, 2, 1)
	}
	if !opts.Replayable {
		dst = jsvalue.AppendNumber(append(dst, ",\n  \"numberOfRequests\": "...), float64(stubs.Requests()))
	}
	if !opts.List {
		dst = strconv.AppendBool(append(dst, ",\n  \"recordRequests\": "...), def.RecordRequests)
		if def.Protocol == "tcp" {
			dst = config.AppendString(append(dst, ",\n  \"mode\": "...), def.Mode)
		}
		if def.Protocol == "https" {
			md := &config.Object{Members: make([]config.Member, 0, 6)}
			httpsMetadata(md, def.Header)
			for _, m := range md.Members {
				dst = append(dst, ",\n  "...)
				dst = append(config.AppendString(dst, m.Key), ": "...)
				dst = config.AppendJSONAt(dst, m.Value, 2, 1)
			}
		}
	}
	if v, ok := def.Header.Get("endOfRequestResolver"); ok && jsvalue.Truthy(v) {
		dst = config.AppendJSONAt(append(dst, ",\n  \"endOfRequestResolver\": "...), v, 2, 1)
	}
	self := opts.BaseURL + "/imposters/" + strconv.Itoa(im.Port())
	if opts.List {
		return append(appendLinks(append(dst, ",\n  \"_links\": "...), self, true), "\n}"...)
	}
	if !opts.Replayable {
		dst = config.AppendJSONAt(append(dst, ",\n  \"requests\": "...), reqs, 2, 1)
	}
	dst = append(dst, ",\n  \"stubs\": ["...)
	n := 0
	buf := stubTexts.Get().(*[]byte)
	for i := range stubs.Len() {
		*buf = stubs.AppendJSON((*buf)[:0], i)
		if n > 0 {
			dst = append(dst, ',')
		}
		mark := len(dst)
		dst = append(dst, "\n    "...)
		if plainStub(*buf, opts) {
			dst = appendPlainStub(dst, string(*buf), stubs, i, self, opts)
		} else if so := editedStub(stubs, i, self, opts); so != nil {
			dst = config.AppendJSONAt(dst, so, 2, 2)
		} else { // only proxy responses, and opts.RemoveProxies
			if n > 0 {
				mark--
			}
			dst = dst[:mark]
			continue
		}
		n++
	}
	if cap(*buf) <= 64<<10 {
		stubTexts.Put(buf)
	}
	if n == 0 {
		dst = append(dst, ']')
	} else {
		dst = append(dst, "\n  ]"...)
	}
	if !opts.Replayable {
		dst = appendLinks(append(dst, ",\n  \"_links\": "...), self, true)
	}
	return append(dst, "\n}"...)
}

// appendPlainStub appends stub i, whose compact text is text and which plainStub finds
// printed as it is, at level 2 of an imposter's JSON, with the members rawStub adds.
func appendPlainStub(dst []byte, text string, stubs imposter.Stubs, i int, self string, opts PrintOptions) []byte {
	if opts.Replayable {
		return config.AppendIndentedAt(dst, text, 2, 2)
	}
	sep := ",\n      "
	if len(text) < 2 || text == "{}" {
		dst, sep = append(dst, '{'), "\n      "
	} else {
		dst = config.AppendIndentedAt(dst, text[:len(text)-1], 2, 2) // all but its closing brace
	}
	if m := stubs.Matches(i); m != nil {
		dst = config.AppendJSONAt(append(append(dst, sep...), "\"matches\": "...), m, 2, 3)
		sep = ",\n      "
	}
	if opts.Explain {
		dst = jsvalue.AppendNumber(append(append(dst, sep...), "\"hits\": "...), float64(stubs.Hits(i)))
		sep = ",\n      "
	}
	dst = append(append(dst, sep...), "\"_links\": {\n        \"self\": {\n          \"href\": "...)
	dst = config.AppendString(dst, self+"/stubs/"+strconv.Itoa(i))
	return append(dst, "\n        }\n      }\n    }"...)
}

// appendLinks appends an imposter's _links (see links) as a member's value at level 1.
func appendLinks(dst []byte, self string, withStubs bool) []byte {
	dst = config.AppendString(append(dst, "{\n    \"self\": {\n      \"href\": "...), self)
	dst = append(dst, "\n    }"...)
	if withStubs {
		dst = config.AppendString(append(dst, ",\n    \"stubs\": {\n      \"href\": "...), self)
		dst = append(dst[:len(dst)-1], "/stubs\"\n    }"...)
	}
	return append(dst, "\n  }"...)
}
