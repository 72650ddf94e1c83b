package imposter

import (
	"math"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// formatS is node's util.format("%s", v), which node's errors use for the value they name
// (ERR_HTTP_INVALID_STATUS_CODE's "Invalid status code: %s"): String(v) for a string, a boolean,
// null, undefined or a number, and an array or object
// as util.inspect shows it at depth 0 (`[ 1 ]`, `{ a: [Array] }`; compact 3, 80 columns).
func formatS(v config.Value) string {
	if vr, ok := v.(jsvalue.Valuer); ok {
		v = vr.JSValue()
	}
	switch t := v.(type) {
	case float64:
		return inspectNumber(t)
	case []any, *config.Object:
		return inspectValue(t, 0)
	}
	return jsvalue.String(v)
}

// inspectNumber shows a number. (util.inspect shows -0 as "-0", but Mountebank's stubs went
// through JSON, where -0 is 0.)
func inspectNumber(f float64) string {
	return jsvalue.FormatNumber(f)
}

// inspectMaxArrayLength is util.inspect's maxArrayLength: elements past it are counted, not shown.
const inspectMaxArrayLength = 100

// inspectValue is util.inspect(v) at depth 0 of a value nested depth levels down.
func inspectValue(v config.Value, depth int) string {
	if vr, ok := v.(jsvalue.Valuer); ok {
		v = vr.JSValue()
	}
	switch t := v.(type) {
	case string:
		return inspectQuote(t)
	case float64:
		return inspectNumber(t)
	case []any:
		if len(t) == 0 {
			return "[]"
		}
		if depth > 0 {
			return "[Array]"
		}
		n := min(len(t), inspectMaxArrayLength)
		output := make([]string, 0, n+1)
		for _, e := range t[:n] {
			output = append(output, inspectValue(e, depth+1))
		}
		extra := len(t) > n
		if extra {
			more := len(t) - n
			s := "s"
			if more == 1 {
				s = ""
			}
			output = append(output, "... "+jsvalue.FormatNumber(float64(more))+" more item"+s)
		}
		grouped := output
		if len(output) > 6 {
			grouped = groupArrayElements(output, t, extra)
		}
		return reduceToSingleString(grouped, len(grouped) != len(output), "[", "]")
	case *config.Object:
		keys := jsKeyOrder(t)
		if len(keys) == 0 {
			return "{}"
		}
		if depth > 0 {
			return "[Object]"
		}
		output := make([]string, 0, len(keys))
		for _, k := range keys {
			val, _ := t.Get(k)
			output = append(output, inspectKey(k)+": "+inspectValue(val, depth+1))
		}
		return reduceToSingleString(output, false, "{", "}")
	}
	return jsvalue.String(v)
}

// jsKeyOrder lists an object's keys as JavaScript enumerates them: array indexes ascending, then
// the others in the order they were added (each name once).
func jsKeyOrder(o *config.Object) []string {
	var idx, rest []string
	seen := make(map[string]bool, len(o.Members))
	for _, m := range o.Members {
		if seen[m.Key] {
			continue
		}
		seen[m.Key] = true
		if _, ok := jsvalue.ArrayIndex(m.Key); ok {
			idx = append(idx, m.Key)
		} else {
			rest = append(rest, m.Key)
		}
	}
	sort.Slice(idx, func(i, j int) bool {
		a, _ := jsvalue.ArrayIndex(idx[i])
		b, _ := jsvalue.ArrayIndex(idx[j])
		return a < b
	})
	return append(idx, rest...)
}

// inspectKey shows a key bare when it is an identifier, quoted otherwise.
func inspectKey(k string) string {
	if k == "" {
		return "''"
	}
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return inspectQuote(k)
		}
	}
	return k
}

// inspectQuote quotes a string as util.inspect does: single quotes, or double quotes when it
// holds a single quote and no double quote, or backquotes when it holds both and no backquote
// nor "${"; the quote, backslashes and control characters (C0, DEL and C1) escaped.
func inspectQuote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 {
		switch {
		case strings.IndexByte(s, '"') < 0:
			q = '"'
		case strings.IndexByte(s, '`') < 0 && !strings.Contains(s, "${"):
			q = '`'
		}
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(inspectControl[r])
		case r >= 0x7f && r <= 0x9f:
			b.WriteString(`\x`)
			b.WriteByte(upperHex[r>>4])
			b.WriteByte(upperHex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

const upperHex = "0123456789ABCDEF"

// inspectControl are util.inspect's escapes of the control characters below 0x20.
var inspectControl = [0x20]string{
	`\x00`, `\x01`, `\x02`, `\x03`, `\x04`, `\x05`, `\x06`, `\x07`, `\b`, `\t`, `\n`, `\x0B`, `\f`, `\r`,
	`\x0E`, `\x0F`, `\x10`, `\x11`, `\x12`, `\x13`, `\x14`, `\x15`, `\x16`, `\x17`, `\x18`, `\x19`, `\x1A`, `\x1B`,
	`\x1C`, `\x1D`, `\x1E`, `\x1F`,
}

// inspectBreakLength is util.inspect's breakLength.
const inspectBreakLength = 80

// jsLen is a string's length in UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// reduceToSingleString joins the entries on one line when they fit in 80 columns (and were not
// grouped), else one entry (or group) a line indented by two.
func reduceToSingleString(output []string, grouped bool, open, closing string) string {
	if !grouped {
		total := len(output) + len(output) + len(open) + 10
		fits := total+len(output) <= inspectBreakLength
		for _, s := range output {
			if !fits {
				break
			}
			total += jsLen(s)
			fits = total <= inspectBreakLength
		}
		if fits {
			joined := strings.Join(output, ", ")
			if !strings.Contains(joined, "\n") {
				return open + " " + joined + " " + closing
			}
		}
	}
	return open + "\n  " + strings.Join(output, ",\n  ") + "\n" + closing
}

// groupArrayElements arranges the entries of a long array in columns, as util.inspect does for
// arrays of more than six entries of similar length; extra says the last entry is the
// "... n more items" line.
func groupArrayElements(output []string, value []any, extra bool) []string {
	const separatorSpace = 2
	outputLength := len(output)
	if extra {
		outputLength--
	}
	totalLength, maxLength := 0, 0
	dataLen := make([]int, outputLength)
	for i := range outputLength {
		l := jsLen(output[i])
		dataLen[i] = l
		totalLength += l + separatorSpace
		maxLength = max(maxLength, l)
	}
	actualMax := maxLength + separatorSpace
	if !(actualMax*3 < inspectBreakLength && (float64(totalLength)/float64(actualMax) > 5 || maxLength <= 6)) {
		return output
	}
	averageBias := math.Sqrt(float64(actualMax) - float64(totalLength)/float64(len(output)))
	biasedMax := math.Max(float64(actualMax)-3-averageBias, 1)
	columns := min(
		int(math.Floor(math.Sqrt(2.5*biasedMax*float64(outputLength))/biasedMax+0.5)), // Math.round
		inspectBreakLength/actualMax,
		3*4,
		15,
	)
	if columns <= 1 {
		return output
	}
	maxLineLength := make([]int, 0, columns)
	for i := range columns {
		lineLength := 0
		for j := i; j < outputLength; j += columns {
			lineLength = max(lineLength, dataLen[j])
		}
		maxLineLength = append(maxLineLength, lineLength+separatorSpace)
	}
	padStart := true
	for i := range len(output) {
		if i >= len(value) {
			padStart = false // value[i] is undefined for the "more items" entry
			break
		}
		if _, ok := value[i].(float64); !ok {
			padStart = false
			break
		}
	}
	tmp := make([]string, 0, outputLength/columns+2)
	for i := 0; i < outputLength; i += columns {
		end := min(i+columns, outputLength)
		var b strings.Builder
		j := i
		for ; j < end-1; j++ {
			cell := output[j] + ", "
			pad := strings.Repeat(" ", max(maxLineLength[j-i]-dataLen[j]-separatorSpace, 0))
			if padStart {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		if padStart {
			b.WriteString(strings.Repeat(" ", max(maxLineLength[j-i]-separatorSpace-dataLen[j], 0)))
		}
		b.WriteString(output[j])
		tmp = append(tmp, b.String())
	}
	if extra {
		tmp = append(tmp, output[outputLength])
	}
	return tmp
}
