package customproto

import (
	"os"
	"syscall"
)

// sysProcAttr starts the program in a process group of its own (stopped as a whole, children
// included) that the kernel ends with SIGKILL should mockd die without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// terminate sends SIGTERM to the program's process group.
func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill sends SIGKILL to the program's process group.
func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
