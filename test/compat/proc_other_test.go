//go:build !unix

package compat

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func stopProcess(cmd *exec.Cmd) { killProcess(cmd) }

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill() //nolint:errcheck // it may have exited already
	}
}

func lockSuite(string) (func(), error) { return func() {}, nil }
