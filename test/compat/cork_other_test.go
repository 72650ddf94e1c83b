//go:build !linux

package compat

import (
	"errors"
	"net"
)

// cork is Linux's TCP_CORK (see cork_linux_test.go); elsewhere a step asking for it fails.
func cork(*net.TCPConn, bool) error {
	return errors.New("finWithData needs Linux's TCP_CORK")
}
