package script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// A call whose request is canceled (its client went away) is interrupted, however long its
// time limit, and the next call on the runtime is not.
func TestCancelInterruptsTheCall(t *testing.T) {
	e := newEngine(t, time.Minute)
	s := e.NewScope(nil)
	for _, src := range []string{
		`function () { while (true) {} }`,
		`function (config) { setTimeout(function () { config.callback({ body: 'late' }); }, 50000); }`,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.Response(ctx, src, testRequest())
		if err == nil || !strings.Contains(jsonOf(err.(*config.Error).Source), "cancel") {
			t.Errorf("%s: error %v, want a cancellation", src, err)
		}
		cancel()
	}
	got, err := s.Response(context.Background(), `function () { return { body: 'next' }; }`, testRequest())
	if err != nil || jsonOf(got) != `{"body":"next"}` {
		t.Errorf("the call after a canceled one: %s %v", jsonOf(got), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = s.Decorate(ctx, `function (config, response) { for (;;) {} }`, testRequest(), nil)
	if err == nil {
		t.Error("a decorate function whose request was canceled did not fail")
	}
}
