//go:build !race

package netconn

import (
	"runtime"
	"testing"
	"time"
)

// TestArmedDeadlineWaitAllocs: a wait for the deadline the signal's timer is armed for (set
// once, as IdleConn sets a tcp imposter connection's idle deadline for many requests) makes no
// timer of its own and allocates nothing; it made one a wait, a request's.
func TestArmedDeadlineWaitAllocs(t *testing.T) {
	var s signal
	s.init()
	dl := time.Now().Add(time.Hour).UnixNano()
	s.arm(dl)
	defer s.arm(0)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the poller: a notify ends each wait
		for {
			select {
			case <-stop:
				return
			default:
			}
			if s.state.Load() == waiting {
				s.notify()
			} else {
				runtime.Gosched()
			}
		}
	}()
	if a := testing.AllocsPerRun(200, func() { _ = s.wait(dl) }); a != 0 {
		t.Errorf("a wait for the armed deadline allocates %v times, want none", a)
	}
}
