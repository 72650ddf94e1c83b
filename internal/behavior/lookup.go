package behavior

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/jsvalue"
)

// lookupStep is the lookup behavior: a key selected from the request picks a CSV row whose
// columns replace ${into}["column"], ${into}['column'] and ${into}[column] in the response.
type lookupStep struct {
	from      field
	sel       selector
	index     int
	into      string
	keyColumn string
	csv       *csvSource // nil when the data source is not csv
}

// csvSource is a lookup's CSV file. As Mountebank, it is read when a request needs it, so a
// file written or changed after the stub was created is used; the table parsed from it is kept
// until the file's size or modification time changes.
type csvSource struct {
	path, delim, keyColumn string
	files                  *Files
	log                    *slog.Logger
	cached                 atomic.Pointer[csvCache]
}

type csvCache struct {
	size  int64
	mtime time.Time
	table *csvTable
}

// csvTable is a CSV file's header and the rows Mountebank's streaming parser would reach before
// an error.
type csvTable struct {
	header []string
	rows   [][]string
	hasKey bool // the header names keyColumn
}

func compileLookup(cfg *config.Object, opts Options) (step, *config.Error) {
	key := config.AsObject(get(cfg, "key"))
	s := &lookupStep{
		from: compileField(get(key, "from")),
		sel:  compileSelector(config.AsObject(get(key, "using"))),
		into: jsvalue.String(get(cfg, "into")),
	}
	if idx, ok := get(key, "index").(float64); ok && idx >= 0 && idx == float64(int(idx)) {
		s.index = int(idx)
	}
	if csvCfg := config.AsObject(get(config.AsObject(get(cfg, "fromDataSource")), "csv")); csvCfg != nil {
		s.keyColumn = jsvalue.String(get(csvCfg, "keyColumn"))
		delim := ","
		if d, ok := get(csvCfg, "delimiter").(string); ok && d != "" {
			delim = d
		}
		path := jsvalue.String(get(csvCfg, "path"))
		if err := opts.Files.Check("lookup file", path); err != nil {
			err.Source = cfg
			return nil, err
		}
		s.csv = &csvSource{path: path, delim: delim, keyColumn: s.keyColumn, files: opts.Files, log: opts.Logger}
	}
	return s, nil
}

// table returns the CSV file's table as it is now; a file that cannot be read (missing, not a
// regular file, too large, outside the allowed directories) gives an empty table, logged as
// Mountebank logs it.
func (c *csvSource) table() *csvTable {
	if c == nil {
		return nil
	}
	if info, err := os.Stat(c.path); err == nil {
		if t := c.cached.Load(); t != nil && t.size == info.Size() && t.mtime.Equal(info.ModTime()) {
			return t.table
		}
	}
	data, info, err := c.files.Read(c.path)
	if err != nil {
		c.log.Error("Cannot read " + c.path + ": " + err.Error())
		return &csvTable{}
	}
	t := parseCSV(data, c.delim, c.keyColumn, c.log)
	c.cached.Store(&csvCache{size: info.Size(), mtime: info.ModTime(), table: t})
	return t
}

// parseCSV reads CSV text as Mountebank's csv-parse does with its defaults (quotes, no
// trimming, every record as long as the header).
func parseCSV(data []byte, delim, keyColumn string, log *slog.Logger) *csvTable {
	t := &csvTable{}
	var next func() ([]string, error)
	if r, size := utf8.DecodeRuneInString(delim); size == len(delim) && r != '"' && r != '\r' && r != '\n' && r != utf8.RuneError {
		cr := csv.NewReader(bytes.NewReader(data))
		cr.Comma = r
		cr.FieldsPerRecord = 0
		next = cr.Read
	} else {
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		next = func() ([]string, error) {
			for len(lines) > 0 {
				l := lines[0]
				lines = lines[1:]
				if l != "" {
					return strings.Split(l, delim), nil
				}
			}
			return nil, io.EOF
		}
	}
	for {
		rec, err := next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Debug("Error: " + err.Error())
			}
			break
		}
		if t.header == nil {
			t.header = rec
			for _, h := range rec {
				if h == keyColumn {
					t.hasKey = true
				}
			}
			if !t.hasKey {
				log.Error(`CSV headers "` + strings.Join(rec, ",") + `" with delimiter "` + delim + `" does not contain keyColumn:"` + keyColumn + `"`)
				break
			}
			continue
		}
		t.rows = append(t.rows, rec)
	}
	return t
}

// row returns the first row whose keyColumn equals key, as column → value.
func (t *csvTable) row(keyColumn, key string) *config.Object {
	if t == nil || !t.hasKey {
		return nil
	}
	for _, rec := range t.rows {
		o := &config.Object{}
		for i, h := range t.header {
			if i < len(rec) {
				o.Set(h, rec[i])
			}
		}
		if v, ok := o.Get(keyColumn); ok && v == key {
			return o
		}
	}
	return nil
}

func (s *lookupStep) apply(_ context.Context, a *applyState) error {
	// A key from a field named by a number or a boolean is left to select nothing: Mountebank
	// reads the CSV before it looks for the key, which is not followed here.
	from, _ := s.from.get(a.request())
	query := a.query()
	if stringsQuery(s.sel, from, query) {
		return errPrimitive
	}
	vals, err := s.sel.values(from)
	if err != nil {
		return err
	}
	key := "undefined" // keyValues[index] is undefined when nothing was selected
	if s.index < len(vals) && query != nil && vals[s.index] == config.Value(query) {
		return errPrimitive
	}
	if s.index < len(vals) {
		key = jsvalue.String(vals[s.index]) // String(key), as localeCompare reads it
	}
	row := s.csv.table().row(s.keyColumn, key)
	if row.Len() == 0 {
		return nil
	}
	replaceIn(a.resp, func(field string) string {
		if !strings.Contains(field, s.into) {
			return field
		}
		for _, m := range row.Members {
			val := m.Value.(string)
			for _, q := range []string{`"`, `'`, ``} {
				field = replaceAll(field, s.into+"["+q+m.Key+q+"]", val)
			}
		}
		return field
	})
	return nil
}
