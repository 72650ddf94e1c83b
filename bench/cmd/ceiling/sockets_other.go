//go:build !linux

package main

import "errors"

type pairSockets struct{}

func newPairSockets(string) (*pairSockets, error) {
	return nil, errors.New("-listen-on-post: Linux only")
}

func (*pairSockets) open() bool { return false }
func (*pairSockets) close()     {}
