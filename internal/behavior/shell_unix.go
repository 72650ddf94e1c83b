//go:build unix

package behavior

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of its own process group so that a time-out kills
// everything it started, not only the shell.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
