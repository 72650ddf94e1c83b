//go:build !linux

package main

import "errors"

// runLoad needs epoll: elsewhere the harness runs with --loadgen wrk.
func runLoad(loadConfig) (loadResult, error) {
	return loadResult{}, errors.New("the Go load generator needs Linux (epoll); use --loadgen wrk")
}
