package main

import (
	"context"
	"errors"
	"fmt"
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
)

// serverFlags are `mb start`'s flags under their Mountebank names, plus mockd's -c.
type serverFlags struct {
	configs        []string
	configfile     string
	port           int
	host           string
	allowInjection bool
	localOnly      bool
	ipWhitelist    string
	mock           bool
	debug          bool
	pidfile        string
	logfile        string
	loglevel       string
	logFormat      string
	nologfile      bool
	origin         string
	apikey         string
	datadir        string
	noParse        bool
	drain          time.Duration
	scriptTimeout  time.Duration
	scriptMemory   byteSize
	headerTimeout  time.Duration
	idleTimeout    time.Duration
	maxBody        byteSize
	journalSize    int
	journalBytes   byteSize
	fileRoots      []string
	noMetrics      bool
	verdict        string
	watch          bool
	watchInterval  time.Duration
}

func (f *serverFlags) register(fs *pflag.FlagSet, mbStyle bool) {
	fs.StringArrayVarP(&f.configs, "config", "c", nil, "config file, directory or glob (YAML or Mountebank JSON); repeatable")
	fs.StringVar(&f.configfile, "configfile", "", "Mountebank config file to load at start")
	fs.IntVar(&f.port, "port", 2525, "admin API port (0 picks a free port)")
	fs.StringVar(&f.host, "host", "", "address to bind the admin API and imposters to (default all interfaces)")
	fs.BoolVar(&f.allowInjection, "allowInjection", false, "allow JavaScript injection and shell commands in stubs")
	fs.BoolVar(&f.localOnly, "localOnly", false, "accept requests to the admin API and every imposter from loopback only")
	fs.StringVar(&f.ipWhitelist, "ipWhitelist", "*", "pipe-separated client addresses (besides loopback) the admin API and every imposter accept")
	fs.BoolVar(&f.mock, "mock", false, "record requests on every imposter")
	fs.BoolVar(&f.debug, "debug", false, "record stub matches (shown as \"matches\" on each stub)")
	defaultPid := ""
	if mbStyle {
		defaultPid = "mb.pid"
	}
	fs.StringVar(&f.pidfile, "pidfile", defaultPid, "write the process id to this file")
	fs.StringVar(&f.logfile, "logfile", "", "append JSON log lines to this file")
	fs.StringVar(&f.loglevel, "loglevel", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "console log lines: text (Mountebank's \"info: message\") or json (one JSON object a line)")
	fs.BoolVar(&f.nologfile, "nologfile", false, "write no log file")
	fs.StringVar(&f.origin, "origin", "", "CORS origin allowed on the admin API")
	fs.StringVar(&f.apikey, "apikey", "", "require this key in the x-api-key header of admin requests")
	fs.StringVar(&f.datadir, "datadir", "", "persist imposters in this directory and start with the ones saved there")
	fs.BoolVar(&f.noParse, "noParse", false, "do not render JSON config files as EJS templates")
	fs.DurationVar(&f.scriptTimeout, "script-timeout", 5*time.Second, "time limit for each JavaScript call and shell command (a request whose script runs longer fails with a 500)")
	f.scriptMemory = 256 << 20
	fs.Var(&f.scriptMemory, "script-memory", "how much one JavaScript call may make the heap grow (a request whose script takes more fails with a 500); 0 = no limit")
	fs.DurationVar(&f.drain, "drain-timeout", 10*time.Second, "how long SIGTERM or Ctrl-C (and deleting an imposter) lets requests in flight finish; a second signal exits at once")
	fs.DurationVar(&f.headerTimeout, "header-timeout", time.Minute, "close an http connection (imposter or admin API) whose request takes longer to arrive, from its first byte to its last, answering 408 (slowloris); 0 = no limit")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "close a connection (imposter or admin API) that waits longer for its next request, and give up on a tcp proxy's origin after it")
	f.maxBody = 64 << 20
	fs.Var(&f.maxBody, "max-body", "largest request body an http imposter accepts, also after gzip or brotli decompression (413 past it), and largest tcp request or smtp message")
	fs.StringArrayVar(&f.fileRoots, "file-root", nil, "also let stubs name files (a lookup's CSV) under this directory; repeatable. Without --allowInjection they must lie under the working directory, a config file's directory or a --file-root")
	fs.IntVar(&f.journalSize, "journal-size", 100000, "recorded requests each imposter keeps (the oldest go first)")
	f.journalBytes = 256 << 20
	fs.Var(&f.journalBytes, "journal-bytes", "approximate bytes of recorded requests each imposter keeps (the oldest go first)")
	fs.BoolVar(&f.noMetrics, "no-metrics", false, "record no request metrics (GET /metrics answers 404)")
	fs.StringVar(&f.verdict, "verdict", "", "at shutdown, write the verdict of GET /verify to this file (JUnit XML when it ends in .xml, else JSON)")
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
			return runServer(cmd, f)
		},
	}
	f.register(cmd.Flags(), mbStyle)
	return cmd
}

// applyServerBlock sets every flag the command line did not set from the YAML server block.
func applyServerBlock(cmd *cobra.Command, f *serverFlags, server *config.Object) error {
	for _, m := range server.Members {
		if cmd.Flags().Changed(m.Key) {
			continue
		}
		var text string
		switch v := m.Value.(type) {
		case string:
			text = v
		case bool:
			text = strconv.FormatBool(v)
		case float64:
			text = config.FormatNumber(v)
		case []any:
			parts := make([]string, 0, len(v))
			for _, e := range v {
				parts = append(parts, fmt.Sprint(e))
			}
			if fl := cmd.Flags().Lookup(m.Key); fl != nil && fl.Value.Type() == "stringArray" {
				for _, p := range parts { // a repeatable flag: once per element
					if err := cmd.Flags().Set(m.Key, p); err != nil {
						return fmt.Errorf("server.%s: %w", m.Key, err)
					}
				}
				continue
			}
			text = strings.Join(parts, "|")
		default:
			return fmt.Errorf("server.%s: unsupported value", m.Key)
		}
		if m.Key == "configfile" {
			return fmt.Errorf("server.configfile: not allowed inside a config file")
		}
		if err := cmd.Flags().Set(m.Key, text); err != nil {
			return fmt.Errorf("server.%s: %w", m.Key, err)
		}
	}
	return nil
}

func runServer(cmd *cobra.Command, f *serverFlags) error {
	raiseOpenFilesLimit()
	files := append([]string(nil), f.configs...)
	if f.configfile != "" {
		files = append(files, f.configfile)
	}
	var cfg *config.Config
	if len(files) > 0 {
		var err error
		var render config.Renderer
		if !f.noParse {
			render = app.RenderEJS
		}
		if cfg, err = config.LoadRendered(files, render); err != nil {
			return configError(err)
		}
		if err := applyServerBlock(cmd, f, cfg.Server); err != nil {
			return configError(err)
		}
	}
	var whitelist []string
	if f.ipWhitelist != "" && f.ipWhitelist != "*" {
		whitelist = strings.Split(f.ipWhitelist, "|")
	}
	logfile := f.logfile
	if f.nologfile {
		logfile = ""
	}
	a, err := app.New(app.Options{
		Port:           f.port,
		Host:           f.host,
		Config:         cfg,
		AllowInjection: f.allowInjection,
		LocalOnly:      f.localOnly,
		IPWhitelist:    whitelist,
		Mock:           f.mock,
		Debug:          f.debug,
		LogLevel:       f.loglevel,
		LogFormat:      f.logFormat,
		LogFile:        logfile,
		NoLogFile:      f.nologfile,
		APIKey:         f.apikey,
		Origin:         f.origin,
		PidFile:        f.pidfile,
		ScriptTimeout:  f.scriptTimeout,
		ScriptMemory:   scriptMemory(f.scriptMemory),
		HeaderTimeout:  f.headerTimeout,
		IdleTimeout:    f.idleTimeout,
		JournalSize:    f.journalSize,
		JournalBytes:   int(f.journalBytes),
		FileRoots:      append(configDirs(files), f.fileRoots...),
		DrainTimeout:   f.drain,
		MaxBody:        int(f.maxBody),
		NoMetrics:      f.noMetrics,
		Console:        cmd.OutOrStdout(),
		DataDir:        f.datadir,
	})
	if err != nil {
		return configError(err)
	}
	if err := a.Start(); err != nil {
		return err
	}
	if f.pidfile != "" {
		if err := os.WriteFile(f.pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			a.Stop(context.Background())
			return fmt.Errorf("cannot write pid file: %w", err)
		}
		defer os.Remove(f.pidfile)
	}
	if len(files) > 0 {
		reloader(cmd, f, a, files)
	} else if f.watch {
		fmt.Fprintln(cmd.ErrOrStderr(), "mockd: --watch has no config file to watch (give -c FILE)")
	}
	<-cmd.Context().Done()
	ctx, cancel := context.WithTimeout(context.Background(), f.drain)
	defer cancel()
	a.Stop(ctx)
	if f.verdict != "" {
		return writeVerdict(f.verdict, a.Verdict(false), false)
	}
	return nil
}

// scriptMemory turns --script-memory into app.Options.ScriptMemory (0 there is the default).
func scriptMemory(n byteSize) int64 {
	if n == 0 {
		return -1
	}
	return int64(n)
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

// reloader reloads the config files on SIGHUP and, with --watch, when one changes, until the
// command's context ends. A file with errors is reported with its line and changes nothing.
func reloader(cmd *cobra.Command, f *serverFlags, a *app.App, files []string) {
	ctx := cmd.Context()
	errw := cmd.ErrOrStderr()
	var render config.Renderer
	if !f.noParse {
		render = app.RenderEJS
	}
	reload := func(why string) {
		cfg, err := config.LoadRendered(files, render)
		var res app.ReloadResult
		if err == nil {
			res, err = a.Reload(cfg)
		}
		for _, w := range res.Warnings {
			fmt.Fprintln(errw, "mockd: reload: config warning:", w)
		}
		var le *config.LoadError
		switch {
		case errors.As(err, &le):
			for _, p := range le.Problems {
				fmt.Fprintln(errw, "mockd: reload: config error:", p)
			}
			fmt.Fprintf(errw, "mockd: reload (%s) refused: the running imposters are unchanged\n", why)
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
	var pidfile string
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop a mockd started with a pid file (as `mb stop`)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return stopByPidfile(pidfile)
		},
	}
	cmd.Flags().StringVar(&pidfile, "pidfile", "mb.pid", "the pid file mockd start wrote")
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
			if err := stopByPidfile(f.pidfile); err != nil {
				return err
			}
			return runServer(cmd, f)
		},
	}
	f.register(cmd.Flags(), true)
	return cmd
}

func newValidateCmd() *cobra.Command {
	var files []string
	var allowInjection bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Compile every imposter of the config files and report every problem",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("validate needs at least one -c FILE")
			}
			n, warnings, err := app.Check(files, allowInjection)
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
