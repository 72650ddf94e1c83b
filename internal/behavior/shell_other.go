//go:build !unix

package behavior

import "os/exec"

func setProcessGroup(*exec.Cmd) {}
