//go:build !linux

package netconn

import "net"

// canTellPending: connPending cannot tell whether a connection waits.
const canTellPending = false

// connPending reports whether a connection waits to be accepted on ln: where it cannot tell
// (not Linux), true.
func connPending(net.Listener) bool { return true }
