package behavior

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
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

// DefaultMaxOutput is how much a shellTransform command may write to its standard output, and to
// its standard error, unless Options.MaxOutput says otherwise (Mountebank's is node's longest
// string, about 512 MiB, held in memory twice).
const DefaultMaxOutput = 64 << 20

// boundedBuffer keeps what a command writes up to max bytes; the write past it calls over (which
// kills the command) and fails, as node's exec does past its maxBuffer. The buffer is a field,
// not embedded: io.Copy would use bytes.Buffer's ReadFrom and read without bound.
type boundedBuffer struct {
	buf  bytes.Buffer
	max  int
	over func()
	full atomic.Bool // read after the command ended, perhaps while the copy still runs
}

var errOutputTooLarge = errors.New("output larger than the limit")

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.full.Load() || b.buf.Len()+len(p) > b.max {
		if !b.full.Swap(true) {
			b.over()
		}
		return 0, errOutputTooLarge
	}
	return b.buf.Write(p)
}

// shellStep is the shellTransform behavior: `command 'request JSON' 'response JSON'` run by the
// shell, with MB_REQUEST and MB_RESPONSE in its environment; its standard output, parsed as JSON,
// becomes the response. It is killed when it outlives the time limit.
type shellStep struct {
	command   string
	timeout   time.Duration
	maxOutput int
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
	stdout := &boundedBuffer{max: s.maxOutput, over: cancel}
	stderr := &boundedBuffer{max: s.maxOutput, over: cancel}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	tooLarge := ""
	if stdout.full.Load() {
		tooLarge = "standard output"
	} else if stderr.full.Load() {
		tooLarge = "standard error"
	}
	if err != nil {
		if tooLarge == "" && stderr.buf.Len() > 0 {
			a.log.Error(stderr.buf.String())
		}
		msg := "Command failed: " + full + "\n" + stderr.buf.String()
		switch {
		case tooLarge != "":
			msg = fmt.Sprintf("Command failed: %s\nkilled: its %s was larger than %d bytes (--max-body)", full, tooLarge, s.maxOutput)
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			msg = fmt.Sprintf("Command failed: %s\nkilled after the time limit of %s", full, s.timeout)
		}
		return &ShellError{Text: msg}
	}
	out, perr := config.ParseJSON(stdout.buf.Bytes())
	if perr != nil {
		return &ShellError{Text: "Shell command returned invalid JSON: '" + stdout.buf.String() + "'"}
	}
	obj, ok := out.(*config.Object)
	if !ok {
		obj = &config.Object{}
	}
	a.resp = obj
	return nil
}
