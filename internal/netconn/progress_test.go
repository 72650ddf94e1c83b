package netconn

import (
	"io"
	"net"
	"slices"
	"testing"
)

// progressConn is a TCP connection that reports its writes' progress (as FIFOConn does), each
// Write going out in system calls of 64 KiB, one tick of the listener's clock apart.
type progressConn struct {
	net.Conn
	p      writeProgress
	l      *IdleListener
	ic     *idleConn
	writes []int   // the length of each Write
	marks  []int64 // ic.writing after each system call
}

func (c *progressConn) reportWrites(p writeProgress) { c.p = p }

func (c *progressConn) Write(b []byte) (int, error) {
	c.writes = append(c.writes, len(b))
	for off := 0; off < len(b); off += 64 << 10 {
		c.l.tick.Add(1)
		c.p.wrote(min(64<<10, len(b)-off))
		c.marks = append(c.marks, c.ic.writing.Load())
	}
	return len(b), nil
}

// An answer goes to a connection that reports its writes' progress in one Write (not in
// writeStep pieces, each pushing its segments and waking the client apart), and every
// writeStep of it that goes out marks the write's progress for the sweeper.
func TestWriteProgress(t *testing.T) {
	l := &IdleListener{}
	l.tick.Store(100)
	pc := &progressConn{l: l}
	ic := l.newConn(pc)
	pc.ic = ic
	if n, err := ic.Write(make([]byte, 1<<20)); n != 1<<20 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if !slices.Equal(pc.writes, []int{1 << 20}) {
		t.Fatalf("writes of the connection: %v, want one of the whole answer", pc.writes)
	}
	// 16 system calls of 64 KiB at ticks 101..116: the write began at tick 100, and each
	// fourth call (256 KiB) marks it again.
	want := make([]int64, 16)
	for i := range want {
		want[i] = 100 + int64((i+1)/4*4)
	}
	if !slices.Equal(pc.marks, want) {
		t.Fatalf("marks of the write's progress: %v, want %v", pc.marks, want)
	}
	if w := ic.writing.Load(); w != 0 {
		t.Fatalf("writing = %d after the write, want 0", w)
	}
	// Bytes sent outside a Write (a TLS close_notify) mark nothing.
	pc.p.wrote(1 << 20)
	if w := ic.writing.Load(); w != 0 {
		t.Fatalf("writing = %d after bytes sent outside a write, want 0", w)
	}
}

// pollConn is a TCP connection that can poll for a body's bytes (as FIFOConn can): each Read
// gives the next of reads, and its poll, if asked for, missed when miss says so.
type pollConn struct {
	net.Conn
	reads  []string
	miss   map[int]bool
	on     bool
	polled []bool // whether each Read was asked to poll
}

func (c *pollConn) pollBody(on bool) bool {
	c.on = on
	return !on && c.miss[len(c.polled)-1]
}

func (c *pollConn) Read(b []byte) (int, error) {
	i := len(c.polled)
	if i == len(c.reads) {
		return 0, io.EOF
	}
	c.polled = append(c.polled, c.on)
	return copy(b, c.reads[i]), nil
}

// Reads poll for the rest of a body of a known length only; a poll that missed stops the
// polls of its request (a slow client costs one a request), and the next request polls again.
func TestBodyPollCredit(t *testing.T) {
	pc := &pollConn{
		reads: []string{
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\nab", // the header block: not polled
			"cd", "ef", "ghijkl", // the first poll misses: no more in this request
			"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n",
			"uv", "wx", "yz", // polls that find their bytes go on
			"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n", "abc\r\n0\r\n\r\n", // chunks: not polled
			"GET /d HTTP/1.1\r\nHost: x\r\n\r\n",
		},
		miss: map[int]bool{1: true},
	}
	ic := (&IdleListener{}).newConn(pc)
	buf := make([]byte, 4096)
	for i := range pc.reads {
		if _, err := ic.Read(buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if i == 3 || i == 7 || i == 9 {
			ic.next = true // the request was answered (IdleConnState)
		}
	}
	want := []bool{false, true, false, false, false, true, true, true, false, false, false}
	if !slices.Equal(pc.polled, want) {
		t.Fatalf("reads that polled: %v, want %v", pc.polled, want)
	}
}
