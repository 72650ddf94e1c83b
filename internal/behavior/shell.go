package behavior

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// ShellError is a failed shellTransform. Mountebank rejects with a bare string here, so its
// answer is a 500 whose body is {"errors":[Text]} (a string, not an error object).
type ShellError struct{ Text string }

func (e *ShellError) Error() string { return e.Text }

// maxShellCommandLength is Mountebank's limit past which the request and response are passed only
// through the environment, not as arguments.
const maxShellCommandLength = 2048

// shellStep is the shellTransform behavior: `command 'request JSON' 'response JSON'` run by the
// shell, with MB_REQUEST and MB_RESPONSE in its environment; its standard output, parsed as JSON,
// becomes the response. It is killed when it outlives the time limit.
type shellStep struct {
	command string
	timeout time.Duration
}

func (s *shellStep) apply(ctx context.Context, a *applyState) error {
	reqJSON := string(config.MarshalJSON(a.request(), 0))
	respJSON := string(config.MarshalJSON(a.resp, 0))
	full := s.command + " '" + reqJSON + "' '" + respJSON + "'"
	if len(full) >= maxShellCommandLength {
		full = s.command
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", full)
	cmd.Env = append(os.Environ(), "MB_REQUEST="+reqJSON, "MB_RESPONSE="+respJSON)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err != nil {
		if stderr.Len() > 0 {
			a.log.Error(stderr.String())
		}
		msg := "Command failed: " + full + "\n" + stderr.String()
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = fmt.Sprintf("Command failed: %s\nkilled after the time limit of %s", full, s.timeout)
		}
		return &ShellError{Text: msg}
	}
	out, perr := config.ParseJSON(stdout.Bytes())
	if perr != nil {
		return &ShellError{Text: "Shell command returned invalid JSON: '" + stdout.String() + "'"}
	}
	obj, ok := out.(*config.Object)
	if !ok {
		obj = &config.Object{}
	}
	a.resp = obj
	return nil
}
