//go:build !race

package app

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// maxAllocsPerPair bounds what an admin POST /imposters + DELETE /imposters/:port pair of a
// small http imposter allocates through the whole app (BenchmarkImposterCreateDelete's op):
// 162 when this was written, down from 189 (issue #26: the admin-pairs p99 tail is GC, which
// follows the garbage per pair); 94 since the accept loop (and the fasthttp.Server) start with
// the first connection, a new imposter of the last one's stubs shares its compiled predicates
// and Mountebank's keys are strings of the process; 73 -> 54 since the imposter's scope is
// put together once, an imposter without a defaultResponse shares the default response, the
// admin API routes and links a pair's requests without copying their path, Host and Location;
// 51 since an imposter's empty request list, the parse's dry run and the imposter's host are
// made once; 50 since a new imposter of the last one's stubs takes their compiled Set as it is;
// 49 since it shares their packed texts too; 46 since the imposter's logger is one allocation
// (logs.Scoped, not slog's With: four); 45 since the answer kept for the DELETE names its
// imposter by serial, not by a weak pointer; 43 since a stub's path and self link are not
// strings made for each; 42 since the DELETE's port is read without writing it back;
// 40 since the registry's listing of its one imposter is the imposter's own, and neither
// the imposter's serving nor its listener's pauses make channels it does not use; 38 since
// an imposter's deferred start is a pointer into it (the bound lowered with each).
// The margin is for the odd background allocation (a timer, a sweeper) counted with the pair;
// raising the bound needs a reason.
const maxAllocsPerPair = 39

func TestImposterCreateDeleteAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("a few hundred pairs")
	}
	port := freePort(t)
	a, c, _ := startInmem(t, Options{Port: 2525, LogLevel: "warn"})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	post, del := fasthttp.AcquireRequest(), fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	post.Header.SetMethod("POST")
	post.SetRequestURI("http://localhost:2525/imposters")
	post.Header.SetContentType("application/json")
	post.SetBodyString(`{"protocol":"http","port":` + strconv.Itoa(port) + `,"host":"127.0.0.1","stubs":[` +
		`{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`)
	del.Header.SetMethod("DELETE")
	del.SetRequestURI("http://localhost:2525/imposters/" + strconv.Itoa(port))
	var failed error
	do := func(req *fasthttp.Request, want int) {
		if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
			failed = err
		} else if resp.StatusCode() != want && failed == nil {
			failed = &statusError{string(req.Header.Method()), resp.StatusCode(), string(resp.Body())}
		}
	}
	n := testing.AllocsPerRun(300, func() {
		do(post, 201)
		do(del, 200)
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if n > maxAllocsPerPair {
		t.Errorf("a POST/DELETE pair allocates %v times, want at most %d", n, maxAllocsPerPair)
	}
}

type statusError struct {
	method string
	status int
	body   string
}

func (e *statusError) Error() string {
	return e.method + ": " + strconv.Itoa(e.status) + " " + e.body
}
