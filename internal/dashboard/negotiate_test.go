package dashboard

import "testing"

// The answers are Mountebank 2.9.1's (Express res.format with json first, then html), read off a
// running mb with curl.
func TestWantsHTML(t *testing.T) {
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", false},
		{"text/html", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},            // Chromium
		{"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8", true}, // Firefox
		{"application/json, text/html", false},
		{"text/html, application/json", true},
		{"text/*", true},
		{"application/json;q=0.5, text/html;q=0.9", true},
		{"application/json, text/plain, */*", false}, // axios
		{"text/plain", false},                        // Mountebank: 406; mockd keeps JSON
		{"text/html;q=0", false},
		{"text/html;q=0, */*", false},
		{"*/*;q=0.5, text/html;q=0.1", false},
		{"application/*, text/html", true}, // text/html is the more specific match
		{"TEXT/HTML", true},
		{"text/html;level=1", false}, // a parameter the provided type lacks: no match
		{"text/html;charset=*", true},
		{"text/html;q=0.8, application/json;q=0.8", true},
		{"application/json;q=0.8, text/html;q=0.8", false},
		{"text/html;q=abc", false},
		{"garbage", false},
		{"text/html, garbage", true},
		{` text/html ; q="0.7" , application/json;q=0.6`, true},
	}
	for _, tt := range tests {
		if got := WantsHTML([]byte(tt.accept)); got != tt.want {
			t.Errorf("WantsHTML(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

func FuzzWantsHTML(f *testing.F) {
	f.Add("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	f.Add(`a/b;x="y,z";q=0.1, */*`)
	f.Fuzz(func(t *testing.T, accept string) {
		WantsHTML([]byte(accept))
	})
}
