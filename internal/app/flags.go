package app

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mockd/mockd/internal/netconn"
)

// BindFlags declares the server flags of `mockd serve`, `start` and `restart` on fs, each bound
// to its field of o, and sets those fields to the flags' defaults. It is the one declaration of
// these flags, and their names are the keys a YAML server block takes (ServerKeys). mbStyle
// gives --pidfile Mountebank's default, mb.pid.
func (o *Options) BindFlags(fs *pflag.FlagSet, mbStyle bool) {
	// mb's one-letter aliases (-p, -h, -i, -l, -w, -m, -d, -o) on the Mountebank-style commands;
	// there -h is the host, as in mb, and help is --help only.
	short := func(s string) string {
		if mbStyle {
			return s
		}
		return ""
	}
	fs.IntVarP(&o.Port, "port", short("p"), 2525, "admin API port (0 picks a free port)")
	fs.StringVarP(&o.Host, "host", short("h"), "", "address to bind the admin API and imposters to (default all interfaces)")
	fs.BoolVarP(&o.AllowInjection, "allowInjection", short("i"), false, "allow JavaScript injection and shell commands in stubs")
	fs.BoolVarP(&o.LocalOnly, "localOnly", short("l"), false, "accept requests to the admin API and every imposter from loopback only")
	fs.VarP((*pipeList)(&o.IPWhitelist), "ipWhitelist", short("w"), "pipe-separated client addresses (besides loopback) the admin API and every imposter accept")
	fs.BoolVarP(&o.Mock, "mock", short("m"), false, "record requests on every imposter")
	fs.BoolVarP(&o.Debug, "debug", short("d"), false, "record stub matches (shown as \"matches\" on each stub)")
	defaultPid := ""
	if mbStyle {
		defaultPid = "mb.pid"
	}
	fs.StringVar(&o.PidFile, "pidfile", defaultPid, "write the process id to this file")
	fs.StringVar(&o.LogFile, "logfile", "", "append JSON log lines to this file")
	fs.StringVar(&o.LogLevel, "loglevel", "info", "debug, info, warn or error")
	fs.StringVar(&o.LogFormat, "log-format", "text", "console log lines: text (Mountebank's \"info: message\") or json (one JSON object a line)")
	fs.BoolVar(&o.NoLogFile, "nologfile", false, "write no log file")
	fs.StringVarP(&o.Origin, "origin", short("o"), "", "CORS origin allowed on the admin API")
	fs.StringVar(&o.APIKey, "apikey", "", "require this key in the x-api-key header of admin requests")
	fs.StringVar(&o.DataDir, "datadir", "", "persist imposters in this directory and start with the ones saved there")
	fs.BoolVar(&o.NoParse, "noParse", false, "do not render JSON config files as EJS templates")
	fs.DurationVar(&o.ScriptTimeout, "script-timeout", 5*time.Second, "time limit for each JavaScript call and shell command (a request whose script runs longer fails with a 500)")
	o.ScriptMemory = 256 << 20
	fs.Var(sizeOrNone[int64]{&o.ScriptMemory}, "script-memory", "how much one JavaScript call may make the heap grow (a request whose script takes more fails with a 500); 0 = no limit")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 10*time.Second, "how long SIGTERM or Ctrl-C (and deleting an imposter) lets requests in flight finish; a second signal exits at once")
	fs.DurationVar(&o.HeaderTimeout, "header-timeout", time.Minute, "close an http connection (imposter or admin API) whose request takes longer to arrive, from its first byte to its last, answering 408 (slowloris); 0 = no limit")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 2*time.Minute, "close a connection (imposter or admin API) that waits longer for its next request, or whose answer makes no progress for as long (a client that does not read it), and give up on a tcp proxy's origin after it")
	o.MaxBody = 64 << 20
	fs.Var((*ByteSize)(&o.MaxBody), "max-body", "largest request body an http imposter accepts, also after gzip or brotli decompression (413 past it), largest tcp request or smtp message, and largest answer a proxy reads from its origin")
	o.AdminMaxBody = DefaultAdminMaxBody
	fs.Var((*ByteSize)(&o.AdminMaxBody), "admin-max-body", "largest request body the admin API accepts (413 past it); the bodies past 8 KiB it reads at once add up to no more (503 past it)")
	o.AdminMaxIndent = DefaultAdminMaxIndent
	fs.Var(sizeOrNone[int]{&o.AdminMaxIndent}, "admin-max-indent", "largest indentation (line breaks and the spaces of each level) the admin API's answers may give a JSON body it reads, or an imposter's stubs together, or 16 times their size when that is more: a body nested deeper, or a stub added to or replacing one of stubs that would then be, is refused (400 bad data); 0 = no limit")
	fs.StringArrayVar(&o.FileRoots, "file-root", nil, "also let stubs name files (a lookup's CSV) under this directory; repeatable. Without --allowInjection they must lie under the working directory, a config file's directory or a --file-root")
	fs.IntVar(&o.JournalSize, "journal-size", 100000, "recorded requests each imposter keeps (the oldest go first)")
	o.JournalBytes = 256 << 20
	fs.Var((*ByteSize)(&o.JournalBytes), "journal-bytes", "approximate bytes of recorded requests each imposter keeps (the oldest go first)")
	fs.BoolVar(&o.NoMetrics, "no-metrics", false, "record no request metrics (GET /metrics answers 404)")
	fs.StringVar(&o.Store, "store", "", "share the imposters and their stubs' state with the other nodes using this Redis (redis://host:6379/0); see README \"Running several nodes\"")
	fs.StringVar(&o.StoreInit, "store-init", "merge", "what the config files do to the --store at start: merge (add the imposters on ports the store lacks), replace (make them all it holds) or skip")
	fs.DurationVar(&o.StoreWait, "store-wait", 0, "wait this long for an unreachable --store at start (0 = exit at once)")
	fs.BoolVar(&o.StoreScriptState, "store-script-state", false, "keep injection state (config.state) in the --store for every node, rather than in each node: slower, as every script call that may use the state locks, loads and writes it back")
	fs.StringVar(&o.NodeName, "node-name", "", "this node's name among those sharing the --store (default host:admin-port)")
	fs.StringVar(&o.VerdictFile, "verdict", "", "at shutdown, write the verdict of GET /verify to this file (JUnit XML when it ends in .xml, else JSON)")
	o.Netpoller = netconn.PollerFIFO
	fs.Var((*pollerFlag)(&o.Netpoller), "netpoller", "how http, https and tcp imposters wait for requests: fifo (serve busy connections in the order their requests arrived; Linux) or go (Go's runtime poller)")
}

// pollerFlag is --netpoller: go or fifo.
type pollerFlag netconn.Poller

func (p *pollerFlag) Set(s string) error {
	v, err := netconn.ParsePoller(s)
	*p = pollerFlag(v)
	return err
}

func (p *pollerFlag) String() string { return string(*p) }

// Type is "string": the flag reads as one word on the command line.
func (p *pollerFlag) Type() string { return "string" }

// ServerKeys are the keys a YAML server block takes: the names of the flags BindFlags declares,
// protofile (custom protocols, which the command loads: see LoadProtofile), and configfile,
// which the command refuses there with a message of its own.
func ServerKeys() []string {
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	fs.SortFlags = false // in the order they are declared
	new(Options).BindFlags(fs, false)
	keys := []string{}
	fs.VisitAll(func(f *pflag.Flag) { keys = append(keys, f.Name) })
	return append(keys, "protofile", "configfile")
}

// pipeList is a flag holding Mountebank's pipe-separated list: "" and "*" leave it empty.
type pipeList []string

func (l *pipeList) Set(s string) error {
	*l = nil
	if s != "" && s != "*" {
		*l = strings.Split(s, "|")
	}
	return nil
}

func (l *pipeList) String() string {
	if len(*l) == 0 {
		return "*"
	}
	return strings.Join(*l, "|")
}

// Type is "string": the flag reads as one string on the command line.
func (l *pipeList) Type() string { return "string" }

// sizeOrNone is a size flag where 0 means no limit (-1 in the option it sets):
// --script-memory, --admin-max-indent.
type sizeOrNone[T ~int | ~int64] struct{ v *T }

func (m sizeOrNone[T]) Set(s string) error {
	var b ByteSize
	if err := b.Set(s); err != nil {
		return err
	}
	*m.v = T(b)
	if b == 0 {
		*m.v = -1
	}
	return nil
}

func (m sizeOrNone[T]) String() string {
	if m.v == nil || *m.v < 0 {
		return "0"
	}
	b := ByteSize(*m.v)
	return b.String()
}

// Type is "size", as ByteSize's.
func (m sizeOrNone[T]) Type() string { return "size" }
