//go:build !linux

package netconn

import (
	"errors"
	"net"
)

var errNoRaw = errors.New("no raw listener")

func listenRaw(net.IP, int) (net.Listener, error) { return nil, errNoRaw }

// PrepareSpares reports false: listeners are made by the net package.
func PrepareSpares() bool { return false }
