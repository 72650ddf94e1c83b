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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first SIGTERM or Ctrl-C ends the context: the server stops accepting and lets the
	// requests in flight finish. A second one ends the process at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "mockd: second signal: exiting without waiting for requests in flight")
		os.Exit(1)
	}()
	root := newRootCmd()
	root.SetContext(ctx)
	root.SetArgs(defaultToStart(os.Args[1:], os.Args[0]))
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
		newConvertCmd(), newValidateCmd(), newVersionCmd(), newSaveCmd(), newReplayCmd(),
		newHealthcheckCmd(), newSchemaCmd(), newVerifyCmd(), newImportCmd())
	return root
}
