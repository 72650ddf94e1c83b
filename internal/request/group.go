package request

import "github.com/mockd/mockd/internal/config"

// GroupQuery is querystring.parse's object of pairs (a query or a form): a name's one value
// stays a string, a repeated name's values make an array. Names are found with a map past a
// few (config.Builder): a form of 200,000 fields is linear.
func GroupQuery(kvs []KV) *config.Object {
	o := &config.Object{Members: make([]config.Member, 0, len(kvs))}
	b := config.Builder{O: o}
	for _, kv := range kvs {
		switch cur, _ := b.Get(kv.Name); t := cur.(type) {
		case nil:
			b.Set(kv.Name, kv.Value)
		case []any:
			b.Set(kv.Name, append(t, kv.Value))
		default:
			b.Set(kv.Name, []any{t, kv.Value})
		}
	}
	return o
}

// GroupHeaders is Mountebank's headersMap.ofRaw: as GroupQuery, except that a name repeated
// after an empty value replaces it (arrayifyIfExists tests the value for truth), so `X-A: `
// then `X-A: 1` gives "1", not ["", "1"].
func GroupHeaders(kvs []KV) *config.Object {
	o := &config.Object{Members: make([]config.Member, 0, len(kvs))}
	b := config.Builder{O: o}
	for _, kv := range kvs {
		switch cur, _ := b.Get(kv.Name); t := cur.(type) {
		case []any:
			b.Set(kv.Name, append(t, kv.Value))
		case string:
			if t != "" {
				b.Set(kv.Name, []any{t, kv.Value})
			} else {
				b.Set(kv.Name, kv.Value)
			}
		default:
			b.Set(kv.Name, kv.Value)
		}
	}
	return o
}
