package hbs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // timezone='Australia/Sydney' works on a machine without a zone database
)

// dateValue is a date a helper produced: it renders in its format, or as ISO 8601 in UTC.
type dateValue struct {
	t      time.Time
	format string
}

func (d dateValue) text() string { return formatDate(d.t, d.format) }

// Now is the clock dates are taken from (tests replace it).
var Now = time.Now

func nowHelper(c *call) (any, error) {
	t := Now()
	if off, ok := c.opt("offset"); ok {
		var err error
		if t, err = applyOffset(t, Text(off)); err != nil {
			return nil, err
		}
	}
	return renderDate(c, t)
}

// renderDate applies timezone and format options to t.
func renderDate(c *call, t time.Time) (any, error) {
	t = t.UTC()
	if tz, ok := c.opt("timezone"); ok {
		loc, err := time.LoadLocation(Text(tz))
		if err != nil {
			return nil, fmt.Errorf("unknown timezone %q", Text(tz))
		}
		t = t.In(loc)
	}
	return dateValue{t: t, format: c.optStr("format", "")}, nil
}

func dateHelper(c *call) (any, error) {
	var t time.Time
	switch v := c.arg(0).(type) {
	case dateValue:
		t = v.t
	default:
		var err error
		if t, err = parseAny(Text(v), ""); err != nil {
			return nil, err
		}
	}
	if off, ok := c.opt("offset"); ok {
		var err error
		if t, err = applyOffset(t, Text(off)); err != nil {
			return nil, err
		}
	}
	return renderDate(c, t)
}

func parseDateHelper(c *call) (any, error) {
	t, err := parseAny(c.str(0), c.optStr("format", ""))
	if err != nil {
		return nil, err
	}
	return dateValue{t: t}, nil
}

// parseAny parses a date in format (a Java pattern, epoch or unix) or, without one, as ISO 8601,
// RFC 1123, RFC 1036 or asctime.
func parseAny(s, format string) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch format {
	case "epoch", "unix":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("parseDate: %q is not a number", s)
		}
		if format == "epoch" {
			return time.UnixMilli(n).UTC(), nil
		}
		return time.Unix(n, 0).UTC(), nil
	case "":
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("parseDate: cannot parse %q", s)
	}
	t, err := time.Parse(goLayout(format), s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parseDate: %q does not match %q", s, format)
	}
	return t, nil
}

// applyOffset moves t by an offset such as "3 days", "-24 seconds" or "1 years".
func applyOffset(t time.Time, off string) (time.Time, error) {
	fields := strings.Fields(off)
	if len(fields) != 2 {
		return t, fmt.Errorf("invalid date offset %q (expected e.g. '3 days')", off)
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil {
		return t, fmt.Errorf("invalid date offset %q (expected e.g. '3 days')", off)
	}
	switch strings.TrimSuffix(strings.ToLower(fields[1]), "s") {
	case "second":
		return t.Add(time.Duration(n) * time.Second), nil
	case "minute":
		return t.Add(time.Duration(n) * time.Minute), nil
	case "hour":
		return t.Add(time.Duration(n) * time.Hour), nil
	case "day":
		return t.AddDate(0, 0, n), nil
	case "week":
		return t.AddDate(0, 0, 7*n), nil
	case "month":
		return t.AddDate(0, n, 0), nil
	case "year":
		return t.AddDate(n, 0, 0), nil
	case "millisecond":
		return t.Add(time.Duration(n) * time.Millisecond), nil
	}
	return t, fmt.Errorf("invalid date offset unit in %q", off)
}

// formatDate renders t in a Java SimpleDateFormat pattern, epoch (milliseconds), unix
// (seconds), or, without a format, ISO 8601.
func formatDate(t time.Time, format string) string {
	switch format {
	case "":
		if t.Location() == time.UTC {
			return t.Format("2006-01-02T15:04:05Z")
		}
		return t.Format("2006-01-02T15:04:05Z07:00")
	case "epoch":
		return strconv.FormatInt(t.UnixMilli(), 10)
	case "unix":
		return strconv.FormatInt(t.Unix(), 10)
	}
	return t.Format(goLayout(format))
}

// numericLayouts are the Go layouts of Java's one- and two-letter day, hour (1-12), minute and
// second fields.
var numericLayouts = map[byte][2]string{'d': {"2", "02"}, 'h': {"3", "03"}, 'm': {"4", "04"}, 's': {"5", "05"}}

// goLayout converts a Java SimpleDateFormat pattern to a Go layout.
func goLayout(java string) string {
	var b strings.Builder
	for i := 0; i < len(java); {
		c := java[i]
		if c == '\'' {
			j := strings.IndexByte(java[i+1:], '\'')
			if j < 0 {
				b.WriteString(java[i+1:])
				break
			}
			if j == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(java[i+1 : i+1+j])
			}
			i += j + 2
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			i++
			continue
		}
		n := 1
		for i+n < len(java) && java[i+n] == c {
			n++
		}
		i += n
		switch c {
		case 'y', 'u':
			if n == 2 {
				b.WriteString("06")
			} else {
				b.WriteString("2006")
			}
		case 'M':
			switch {
			case n >= 4:
				b.WriteString("January")
			case n == 3:
				b.WriteString("Jan")
			case n == 2:
				b.WriteString("01")
			default:
				b.WriteString("1")
			}
		case 'd', 'h', 'm', 's':
			// One letter: no padding; two: two digits.
			layout := numericLayouts[c]
			if n == 2 {
				b.WriteString(layout[1])
			} else {
				b.WriteString(layout[0])
			}
		case 'H':
			b.WriteString("15")
		case 'S':
			b.WriteString(strings.Repeat("0", n))
		case 'a':
			b.WriteString("PM")
		case 'E':
			if n >= 4 {
				b.WriteString("Monday")
			} else {
				b.WriteString("Mon")
			}
		case 'z':
			b.WriteString("MST")
		case 'Z':
			b.WriteString("-0700")
		case 'X':
			switch n {
			case 1:
				b.WriteString("Z07")
			case 2:
				b.WriteString("Z0700")
			default:
				b.WriteString("Z07:00")
			}
		case 'D':
			b.WriteString("002")
		default:
			b.WriteString(strings.Repeat(string(c), n))
		}
	}
	return b.String()
}
