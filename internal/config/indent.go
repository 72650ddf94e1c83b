package config

// Indentation is how many bytes of line breaks and indentation AppendJSON(nil, v, indent)
// writes for v, counted only up to a little past limit: it stops, answering more than limit,
// once it knows the answer will be. What v's values hold (strings, numbers) is not counted:
// only what nesting adds, which grows with the square of the depth (a 20 KB array nested
// 10,000 deep is 200 MB once indented by 2).
func Indentation(v Value, indent, limit int) int {
	n := 0
	indentation(v, indent, 0, limit, &n)
	return n
}

func indentation(v Value, indent, level, limit int, n *int) {
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return
		}
		// each element on its own line one level in, then the closing bracket's line
		*n += len(t)*(1+indent*(level+1)) + 1 + indent*level
		for _, e := range t {
			if *n > limit {
				return
			}
			indentation(e, indent, level+1, limit, n)
		}
	case *Object:
		if t == nil || len(t.Members) == 0 {
			return
		}
		*n += len(t.Members)*(1+indent*(level+1)) + 1 + indent*level
		for _, m := range t.Members {
			if *n > limit {
				return
			}
			indentation(m.Value, indent, level+1, limit, n)
		}
	}
}

// IndentationAt is Indentation of v where it stands at level (a stub at level 2 of an
// imposter's JSON).
func IndentationAt(v Value, indent, level, limit int) int {
	n := 0
	indentation(v, indent, level, limit, &n)
	return n
}

// TextIndentation is IndentationAt of the value whose compact JSON text (as AppendJSON(v, 0)
// writes it) is text, read from the text: what AppendIndentedAt(nil, text, indent, level)
// adds to it but the space after each colon. It stops, answering more than limit, once it
// knows the answer will be.
func TextIndentation(text string, indent, level, limit int) int {
	n := 0
	for i := 0; i < len(text) && n <= limit; i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if i+1 < len(text) && (text[i+1] == '}' || text[i+1] == ']') {
				i++ // empty: on its line
				continue
			}
			level++
			n += 1 + indent*level
		case ',':
			n += 1 + indent*level
		case '}', ']':
			level--
			n += 1 + indent*level
		}
	}
	return n
}
