package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mockd/mockd/internal/app"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/customproto"
)

// serverFlags are what the server commands read: app.Options, whose flags app.BindFlags
// declares, the config files to load and whether to watch them (--watch, which a config file
// cannot set).
type serverFlags struct {
	opts          app.Options
	mb            mbOptions // Mountebank-style commands only
	configs       []string
	configfile    string
	watch         bool
	watchInterval time.Duration
}

func (f *serverFlags) register(fs *pflag.FlagSet, mbStyle bool) {
	fs.StringArrayVarP(&f.configs, "config", "c", nil, "config file, directory or glob (YAML or Mountebank JSON); repeatable")
	fs.StringVar(&f.configfile, "configfile", "", "Mountebank config file to load at start")
	f.opts.BindFlags(fs, mbStyle)
	fs.BoolVar(&f.watch, "watch", false, "reload the config files when one is changed, added or removed (SIGHUP always reloads)")
	fs.DurationVar(&f.watchInterval, "watch-interval", 500*time.Millisecond, "how often --watch looks at the config files")
}

func newServeCmd(name string, mbStyle bool) *cobra.Command {
	f := &serverFlags{}
	short := "Run mockd with the imposters of the given config files"
	if mbStyle {
		short = "Run mockd as `mb start` does (accepts Mountebank's flags)"
	}
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if mbStyle {
				if err := f.mb.apply(cmd, f); err != nil {
					return err
				}
			} else if f.mb.protofile != "" {
				loadProtofile(f.mb.protofile, true, &f.opts, cmd.ErrOrStderr())
			}
			return runServer(cmd, f)
		},
	}
	f.register(cmd.Flags(), mbStyle)
	if mbStyle {
		f.mb.register(cmd.Flags())
		mbHelpFlag(cmd)
	} else {
		cmd.Flags().StringVar(&f.mb.protofile, "protofile", "", "JSON file of custom protocols, each {\"createCommand\": \"program args\"}, whose imposters that program serves (as Mountebank's --protofile; not read unless given)")
	}
	return cmd
}

// applyServerBlock sets every flag the command line did not set from the YAML server block
// (whose keys config.LoadWith has checked against app.ServerKeys).
func applyServerBlock(cmd *cobra.Command, server *config.Object) error {
	if server.Has("configfile") {
		return fmt.Errorf("server.configfile: not allowed inside a config file")
	}
	for _, m := range server.Members {
		if m.Value == nil {
			return fmt.Errorf("server.%s: unsupported value", m.Key)
		}
	}
	return setFlags(cmd.Flags(), server, "server.", func(key string) (string, bool) { return key, true })
}

func runServer(cmd *cobra.Command, f *serverFlags) error {
	raiseOpenFilesLimit()
	files := append([]string(nil), f.configs...)
	if f.configfile != "" {
		files = append(files, f.configfile)
	}
	var cfg *config.Config
	if len(files) > 0 {
		load := config.LoadOptions{ServerKeys: app.ServerKeys()}
		if !f.opts.NoParse {
			load.Render = app.RenderEJS
		}
		var err error
		if cfg, err = config.LoadWith(files, load); err != nil {
			return configError(err)
		}
		protofileGiven := cmd.Flags().Changed("protofile")
		if err := applyServerBlock(cmd, cfg.Server); err != nil { // sets f.opts through its flags
			return configError(err)
		}
		if !protofileGiven && cfg.Server.Has("protofile") { // read once the server block named it
			loadProtofile(f.mb.protofile, true, &f.opts, cmd.ErrOrStderr())
		}
	}
	opts := f.opts
	opts.Config, cfg = cfg, nil // not f's: the loaded documents are not kept once built
	if opts.NoLogFile {
		opts.LogFile = ""
	}
	opts.FileRoots = append(configDirs(files), opts.FileRoots...)
	opts.Console = cmd.OutOrStdout()
	a, err := app.New(opts)
	opts.Config = nil // built: the imposters keep what they need of the documents
	if err != nil {
		return configError(err)
	}
	if err := a.Start(); err != nil {
		return err
	}
	if opts.PidFile != "" {
		if err := os.WriteFile(opts.PidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			a.Stop(context.Background())
			return fmt.Errorf("cannot write pid file: %w", err)
		}
		defer func() { _ = os.Remove(opts.PidFile) }()
	}
	if len(files) > 0 {
		reloader(cmd, f, a, files)
	} else if f.watch {
		fmt.Fprintln(cmd.ErrOrStderr(), "mockd: --watch has no config file to watch (give -c FILE)")
	}
	<-cmd.Context().Done()
	ctx, cancel := context.WithTimeout(context.Background(), opts.DrainTimeout)
	defer cancel()
	a.Stop(ctx)
	if opts.VerdictFile != "" {
		return writeVerdict(opts.VerdictFile, a.Verdict(false), false)
	}
	return nil
}

// configDirs returns the directories of the config files, directories and globs named.
func configDirs(patterns []string) []string {
	var dirs []string
	for _, p := range patterns {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			dirs = append(dirs, p)
		} else {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	return dirs
}

// emptyConfig names a config file of patterns that holds nothing but white space, or is ""
// when none does. A reload refuses such a file: one a shell redirection or an editor has just
// truncated, caught before it is written again, would otherwise stop every imposter it had.
// (At start, an empty file is a config of no imposters.)
func emptyConfig(patterns []string) string {
	files, err := config.Files(patterns)
	if err != nil {
		return "" // the load says what is wrong
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && len(strings.TrimSpace(string(data))) == 0 {
			return f
		}
	}
	return ""
}

// reloader reloads the config files on SIGHUP and, with --watch, when one changes, until the
// command's context ends. A file with errors is reported with its line and changes nothing.
func reloader(cmd *cobra.Command, f *serverFlags, a *app.App, files []string) {
	ctx := cmd.Context()
	errw := cmd.ErrOrStderr()
	load := config.LoadOptions{ServerKeys: app.ServerKeys()}
	if !f.opts.NoParse {
		load.Render = app.RenderEJS
	}
	reload := func(why string) {
		if f := emptyConfig(files); f != "" {
			fmt.Fprintf(errw, "mockd: reload (%s) refused: %s is empty (to remove every imposter, write `imposters: []`); the running imposters are unchanged\n", why, f)
			return
		}
		cfg, err := config.LoadWith(files, load)
		var res app.ReloadResult
		if err == nil {
			res, err = a.Reload(cfg)
		}
		for _, w := range res.Warnings {
			fmt.Fprintln(errw, "mockd: reload: config warning:", w)
		}
		var le *config.LoadError
		var refused *app.RefusedError
		switch {
		case errors.As(err, &le):
			for _, p := range le.Problems {
				fmt.Fprintln(errw, "mockd: reload: config error:", p)
			}
			fmt.Fprintf(errw, "mockd: reload (%s) refused: the running imposters are unchanged\n", why)
		case errors.As(err, &refused):
			fmt.Fprintf(errw, "mockd: reload (%s) refused: the running imposters are unchanged (%v); send SIGHUP once the store is back\n", why, refused.Err)
		case err != nil:
			fmt.Fprintf(errw, "mockd: reload (%s): %d unchanged, %d with new stubs, %d restarted, %d added, %d removed; errors:\n%v\n",
				why, res.Unchanged, res.Swapped, res.Restarted, res.Added, res.Removed, err)
		default:
			fmt.Fprintf(errw, "mockd: reloaded (%s): %s\n", why, res)
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reload("SIGHUP")
			}
		}
	}()
	if f.watch {
		go app.Watch(ctx, app.WatchOptions{Patterns: files, Interval: f.watchInterval, Changed: func() { reload("a config file changed") }})
	}
}

// configError prints every config problem and exits 1 without starting anything.
func configError(err error) error {
	var le *config.LoadError
	if errors.As(err, &le) {
		for _, p := range le.Problems {
			fmt.Fprintln(os.Stderr, "mockd: config error:", p)
		}
		return exitError{code: 1}
	}
	return err
}

func newStopCmd() *cobra.Command {
	var pidfile, rcfile string
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop a mockd started with a pid file (as `mb stop`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyRCFile(cmd, rcfile, cmd.ErrOrStderr()); err != nil {
				return err
			}
			return stopByPidfile(pidfile)
		},
	}
	cmd.Flags().StringVar(&pidfile, "pidfile", "mb.pid", "the pid file mockd start wrote")
	registerRCFile(cmd.Flags(), &rcfile)
	return cmd
}

func stopByPidfile(pidfile string) error {
	data, err := os.ReadFile(pidfile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // nothing running, as mb stop
		}
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("%s: not a process id: %q", pidfile, strings.TrimSpace(string(data)))
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(pidfile)
			return nil
		}
		return err
	}
	// Wait (bounded) for the process to go away so a following start can reuse the port.
	for i := 0; i < 300; i++ {
		if err := proc.Signal(syscall.Signal(0)); err != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %d did not stop", pid)
}

func newRestartCmd() *cobra.Command {
	f := &serverFlags{}
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Stop the mockd named by --pidfile and start again (as `mb restart`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.mb.apply(cmd, f); err != nil {
				return err
			}
			if err := stopByPidfile(f.opts.PidFile); err != nil {
				return err
			}
			return runServer(cmd, f)
		},
	}
	f.register(cmd.Flags(), true)
	f.mb.register(cmd.Flags())
	mbHelpFlag(cmd)
	return cmd
}

func newValidateCmd() *cobra.Command {
	var files []string
	var allowInjection bool
	var protofile string
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Compile every imposter of the config files and report every problem",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("validate needs at least one -c FILE")
			}
			var custom []customproto.Spec
			if protofile != "" {
				// Unlike a server, which starts without custom protocols when the file is
				// missing or broken (as mb), validate was asked to check against it.
				specs, err := readProtofile(protofile)
				if err != nil {
					return err
				}
				custom = specs
			}
			n, warnings, err := app.Check(files, allowInjection, custom)
			for _, w := range warnings {
				fmt.Fprintln(os.Stderr, "mockd: config warning:", w)
			}
			if err != nil {
				return configError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %d imposters in %s\n", n, strings.Join(files, ", "))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "config", "c", nil, "config file, directory or glob; repeatable")
	cmd.Flags().BoolVar(&allowInjection, "allowInjection", false, "allow JavaScript injection and shell commands")
	cmd.Flags().StringVar(&protofile, "protofile", "", "JSON file of custom protocols (as serve's --protofile): their imposters' stubs are checked too, no program runs")
	return cmd
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mockd's version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(cmd.OutOrStdout(), app.BuildInfo())
		},
	}
}

// readProtofile reads the custom protocols of a --protofile that a command (validate, schema)
// was asked to check against: a missing file is an error here, where a server starts without
// custom protocols (as mb).
func readProtofile(path string) ([]customproto.Spec, error) {
	specs, err := customproto.Load(path)
	if err == nil && specs == nil {
		err = fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("--protofile %s: %w", path, err)
	}
	return specs, nil
}
