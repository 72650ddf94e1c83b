package imposter

import (
	"errors"
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// Mountebank's http server answers errors.details(error): the error's own fields, then message
// and name (and node's stack, left out); its tcp server writes JSON.stringify(error): own
// fields only, so a JavaScript error is {}.
func TestErrorBodies(t *testing.T) {
	injection := &config.Error{Code: config.CodeInvalidInjection, Message: "invalid response injection",
		Source: config.NewObject("source", "(f)(config)", "data", "nope is not defined")}
	proxyErr := &config.Error{Code: "invalid proxy", Message: "Unable to proxy", Source: "ftp://x"}
	typeErr := &config.Error{Message: "actual.indexOf is not a function",
		Raw: config.NewObject("message", "actual.indexOf is not a function", "name", "TypeError")}
	tests := []struct {
		name      string
		err       error
		http, tcp string
	}{
		{"invalid injection", injection,
			`{"errors":[{"code":"invalid injection","message":"invalid response injection","source":"(f)(config)","data":"nope is not defined","name":"Error"}]}`,
			`{"errors":[{"code":"invalid injection","message":"invalid response injection","source":"(f)(config)","data":"nope is not defined"}]}`},
		{"error with a source", proxyErr,
			`{"errors":[{"code":"invalid proxy","message":"Unable to proxy","source":"ftp://x","name":"Error"}]}`,
			`{"errors":[{"code":"invalid proxy","message":"Unable to proxy","source":"ftp://x"}]}`},
		{"predicates.js TypeError", typeErr,
			`{"errors":[{"message":"actual.indexOf is not a function","name":"TypeError"}]}`,
			`{"errors":[{}]}`},
		{"JavaScript error without a code", &config.Error{Message: "x is not defined"},
			`{"errors":[{"message":"x is not defined","name":"Error"}]}`,
			`{"errors":[{}]}`},
		{"node's own error", config.AddrInUse("", 4545),
			`{"errors":[{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"::","port":4545}]}`,
			`{"errors":[{"code":"EADDRINUSE","errno":-98,"syscall":"listen","address":"::","port":4545}]}`},
		{"plain Go error", errors.New("boom"),
			`{"errors":[{"code":"bad data","message":"boom","name":"Error"}]}`,
			`{"errors":[{"code":"bad data","message":"boom"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(config.MarshalJSON(scriptErrorBody(tt.err), 0)); got != tt.http {
				t.Errorf("http: %s\nwant   %s", got, tt.http)
			}
			if got := string(TCPErrorJSON(tt.err)); got != tt.tcp {
				t.Errorf("tcp:  %s\nwant  %s", got, tt.tcp)
			}
		})
	}
}
