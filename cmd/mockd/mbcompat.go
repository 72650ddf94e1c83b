package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mockd/mockd/internal/app"
	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/customproto"
	"github.com/mockd/mockd/internal/jsvalue"
)

// mbOptions are the options of `mb start` that have no mockd counterpart of their own:
// --rcfile, --log, --protofile, --formatter and --impostersRepository.
type mbOptions struct {
	rcfile, log, protofile, formatter, repository string
}

const defaultFormatter = "mountebank-formatters"

func (m *mbOptions) register(fs *pflag.FlagSet) {
	registerRCFile(fs, &m.rcfile)
	fs.StringVar(&m.log, "log", "", `Mountebank's logging configuration as JSON ({"level": …, "transports": {"console": {"format": …}, "file": {"path": …}}}); overrides --loglevel and --logfile`)
	fs.StringVar(&m.protofile, "protofile", "protocols.json", "JSON file of custom protocols, each {\"createCommand\": \"program args\"}: their imposters are served by that program (Mountebank's custom protocols)")
	registerFormatter(fs, &m.formatter)
	fs.StringVar(&m.repository, "impostersRepository", "", "accepted for compatibility: custom imposters repositories are not supported (use --datadir)")
}

func registerRCFile(fs *pflag.FlagSet, rcfile *string) {
	fs.StringVar(rcfile, "rcfile", "", "JSON file of Mountebank options (as on the command line); the command line wins")
}

func registerFormatter(fs *pflag.FlagSet, formatter *string) {
	fs.StringVar(formatter, "formatter", defaultFormatter, "accepted for compatibility; only Mountebank's default formatter is supported")
}

func checkFormatter(formatter string) error {
	if formatter != defaultFormatter {
		return fmt.Errorf("--formatter %q: only Mountebank's default formatter is supported", formatter)
	}
	return nil
}

// mbHelpFlag declares --help without -h, which Mountebank's commands use for --host.
func mbHelpFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("help", false, "help for "+cmd.Name())
}

// apply reads the rcfile into the flags the command line did not set, then the options that
// change f: --log, and the ones mockd refuses or reports.
func (m *mbOptions) apply(cmd *cobra.Command, f *serverFlags) error {
	errw := cmd.ErrOrStderr()
	if err := applyRCFile(cmd, m.rcfile, errw); err != nil {
		return err
	}
	if err := checkFormatter(m.formatter); err != nil {
		return err
	}
	if m.repository != "" {
		return fmt.Errorf("--impostersRepository %q: custom imposters repositories are not supported (--datadir keeps imposters across restarts)", m.repository)
	}
	if m.log != "" {
		applyLogConfig(m.log, &f.opts, errw)
	}
	loadProtofile(m.protofile, cmd.Flags().Changed("protofile"), &f.opts, errw)
	return nil
}

// applyRCFile sets every flag the command line did not set from Mountebank's rcfile, a JSON
// object of option names (or their one-letter aliases) and values. As mb, a missing file or
// one that is not a JSON object is reported and the command goes on without it.
func applyRCFile(cmd *cobra.Command, path string, errw io.Writer) error {
	if path == "" {
		return nil
	}
	data, err := config.ReadLimited(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(errw, "Cannot find rcfile %s\n", path)
		} else {
			fmt.Fprintf(errw, "Cannot read rcfile %s: %v\n", path, err)
		}
		return nil
	}
	v, err := config.ParseJSON(data)
	obj, ok := v.(*config.Object)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		fmt.Fprintf(errw, "Cannot parse rcfile %s: %v\n", path, err)
		return nil
	}
	fs := cmd.Flags()
	return setFlags(fs, obj, "rcfile "+path+": ", func(key string) (string, bool) {
		fl := fs.Lookup(key)
		if fl == nil && len(key) == 1 {
			fl = fs.ShorthandLookup(key)
		}
		if fl == nil || fl.Name == "rcfile" || fl.Name == "help" {
			return "", false // mb keeps any key; the ones mockd has no flag for change nothing
		}
		return fl.Name, true
	})
}

// setFlags sets each member of obj whose key names a flag (name returns the flag's name and
// whether to set it) that the command line did not set; what prefixes errors.
func setFlags(fs *pflag.FlagSet, obj *config.Object, what string, name func(key string) (string, bool)) error {
	for _, m := range obj.Members {
		key, ok := name(m.Key)
		if !ok || fs.Changed(key) {
			continue
		}
		var text string
		switch v := m.Value.(type) {
		case nil:
			continue
		case string:
			text = v
		case bool:
			text = strconv.FormatBool(v)
		case float64:
			text = jsvalue.FormatNumber(v)
		case *config.Object:
			text = string(config.MarshalJSON(v, 0))
		case []any:
			parts := make([]string, 0, len(v))
			for _, e := range v {
				parts = append(parts, fmt.Sprint(e))
			}
			if fl := fs.Lookup(key); fl != nil && fl.Value.Type() == "stringArray" {
				for _, p := range parts { // a repeatable flag: once per element
					if err := fs.Set(key, p); err != nil {
						return fmt.Errorf("%s%s: %w", what, m.Key, err)
					}
				}
				continue
			}
			text = strings.Join(parts, "|")
		default:
			return fmt.Errorf("%s%s: unsupported value", what, m.Key)
		}
		if err := fs.Set(key, text); err != nil {
			return fmt.Errorf("%s%s: %w", what, m.Key, err)
		}
	}
	return nil
}

// applyLogConfig reads mb's --log JSON: the level, the console transport's format (json or
// Mountebank's text lines; no console transport, no console lines) and the file transport's
// path. As mb, JSON it cannot read is reported and the defaults stay.
func applyLogConfig(text string, o *app.Options, errw io.Writer) {
	v, err := config.ParseJSON([]byte(text))
	obj, ok := v.(*config.Object)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		fmt.Fprintf(errw, "Cannot parse --log as JSON: %v\n", err)
		return
	}
	if level, ok := obj.Get("level"); ok {
		if s, ok := level.(string); ok {
			o.LogLevel = s
		}
	}
	transports, _ := obj.Get("transports")
	tobj, _ := transports.(*config.Object)
	if tobj == nil {
		tobj = config.NewObject()
	}
	console, hasConsole := tobj.Get("console")
	o.Quiet = !hasConsole
	if cobj, ok := console.(*config.Object); ok {
		if format, ok := cobj.Get("format"); ok && format == "json" {
			o.LogFormat = "json"
		} else {
			o.LogFormat = "text"
		}
	}
	o.LogFile = ""
	if file, ok := tobj.Get("file"); ok {
		if fobj, ok := file.(*config.Object); ok {
			if path, ok := fobj.Get("path"); ok {
				if s, ok := path.(string); ok {
					o.LogFile = s
				}
			}
		}
	}
}

// loadProtofile reads the custom protocols of the protofile into opts, as mb loads them: a
// missing file names none (reported when the file was given); one that is not JSON (or not a regular file of at most 1 MiB, which
// is not read: a FIFO or device could block the start) loads none and is reported.
func loadProtofile(path string, given bool, opts *app.Options, errw io.Writer) {
	if given {
		opts.Protofile = path
	}
	specs, err := customproto.Load(path)
	switch {
	case err == nil && specs == nil && given: // missing: mb goes on silently, mockd says so
		fmt.Fprintf(errw, "mockd: --protofile %s: file does not exist; no custom protocols loaded\n", path)
	case errors.Is(err, customproto.ErrInvalid):
		fmt.Fprintf(errw, "mockd: %s %v\n", path, err)
	case errors.Is(err, customproto.ErrNotRead) && !given:
	case errors.Is(err, customproto.ErrNotRead):
		fmt.Fprintf(errw, "mockd: --protofile %s: %v; no custom protocols loaded\n", path, err)
	case err != nil:
		fmt.Fprintf(errw, "mockd: --protofile %s: %v; no custom protocols loaded\n", path, err)
	}
	opts.CustomProtocols = specs
}

// defaultToStart makes Mountebank's command line work unchanged: `mb --port 3000` (options
// without a command) and, when the binary is named mb, a bare `mb` start the server.
func defaultToStart(args []string, argv0 string) []string {
	if len(args) == 0 {
		if strings.TrimSuffix(filepath.Base(argv0), ".exe") == "mb" {
			return []string{"start"}
		}
		return args
	}
	first := args[0]
	if !strings.HasPrefix(first, "-") {
		return args
	}
	switch first {
	case "-h": // mb's alias of --host when a value follows; alone, help
		if len(args) == 1 || strings.HasPrefix(args[1], "-") {
			return args
		}
	case "--help", "--version", "-v":
		return args
	}
	if strings.HasPrefix(first, "--help=") || strings.HasPrefix(first, "--version=") {
		return args
	}
	return append([]string{"start"}, args...)
}
