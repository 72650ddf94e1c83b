// Command mockd serves over-the-wire test doubles and speaks Mountebank's REST API.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/internal/app"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	root := newRootCmd()
	root.SetContext(ctx)
	if err := root.Execute(); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "mockd:", err)
		os.Exit(1)
	}
}

// exitError carries an exit code for a failure that was already reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "mockd",
		Short:         "Over-the-wire test doubles, compatible with Mountebank",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       app.BuildInfo().Version, // enables --version
	}
	root.SetVersionTemplate(app.BuildInfo().String())
	root.AddCommand(newServeCmd("serve", false), newServeCmd("start", true), newStopCmd(), newRestartCmd(),
		newConvertCmd(), newValidateCmd(), newVersionCmd(), newSaveCmd(), newReplayCmd())
	return root
}
