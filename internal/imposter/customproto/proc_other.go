//go:build !linux

package customproto

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate asks the program to stop (os.Interrupt where the system has it).
func terminate(p *os.Process) {
	if err := p.Signal(os.Interrupt); err != nil {
		_ = p.Kill()
	}
}

func kill(p *os.Process) { _ = p.Kill() }
