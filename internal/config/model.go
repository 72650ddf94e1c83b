package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mockd/mockd/internal/jsvalue"
)

// Mountebank error codes, as its API returns them.
const (
	CodeBadData          = "bad data"
	CodeInvalidInjection = "invalid injection"
	CodeResourceConflict = "resource conflict"
	CodeNoSuchResource   = "no such resource"
	CodeInvalidJSON      = "invalid JSON"
	CodeCannotStart      = "cannot start server"
	CodeInsufficient     = "insufficient access"
	CodeUnauthorized     = "unauthorized"
	CodeInvalidProxy     = "invalid proxy"
)

// Error is one configuration or API error: Mountebank's code and message, the offending value
// (Source, rendered as Mountebank does) and where it stands in the configuration (Path).
type Error struct {
	Code    string
	Message string
	Source  Value // nil when absent
	Path    string
	// Raw, when set, is the whole error object as the API renders it, for the errors Mountebank
	// passes through from node unchanged (e.g. EADDRINUSE, which carries no message).
	Raw *Object
	// Input, when set, is shown in place of the message: node's ERR_INVALID_URL, as
	// Mountebank passes it through (its code and the input it could not parse).
	Input *string
}

// Errors is several errors reported together, in order.
type Errors []*Error

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, x := range e {
		msgs[i] = x.Error()
	}
	return strings.Join(msgs, "; ")
}

// Render returns the error as Mountebank's API shows it inside {"errors":[…]}.
func (e *Error) Render() *Object {
	if e.Raw != nil {
		if len(e.Raw.Members) == 0 && e.Source != nil {
			// An error with no fields of its own (a TypeError) shows the source it was given.
			return NewObject("source", e.Source)
		}
		return e.Raw
	}
	o := NewObject("code", e.Code, "message", e.Message)
	if e.Input != nil {
		o = NewObject("code", e.Code, "input", *e.Input)
	}
	if e.Source != nil {
		o.Set("source", e.Source)
	}
	return o
}

// AddrInUse is the error Mountebank 2.9.1 returns when an imposter's port is taken: node's
// listen error, passed through as it is. Node 20 (what mb 2.9.1 runs on today) sets its code
// before its errno, so the keys come in that order (test/compat scenario error-port-taken).
func AddrInUse(host string, port int) *Error {
	e := ListenFailed("EADDRINUSE", -98, host, port)
	e.Message = fmt.Sprintf("Port %d is already in use", port)
	return e
}

// ListenFailed is node's listen error for an imposter's address, as Mountebank passes it
// through: EADDRINUSE (-98), EADDRNOTAVAIL (-99) for an address that is not the machine's.
func ListenFailed(code string, errno int, host string, port int) *Error {
	if host == "" {
		host = "::"
	}
	return &Error{Code: code, Message: fmt.Sprintf("cannot listen on %s port %d (%s)", host, port, code),
		Raw: NewObject("code", code, "errno", float64(errno), "syscall", "listen", "address", host, "port", float64(port))}
}

// LookupFailed is node's getaddrinfo error for an imposter's host name that does not resolve
// (ENOTFOUND, -3008) or could not be resolved now (EAI_AGAIN, -3001), as Mountebank passes it
// through; node lists its errno first here.
func LookupFailed(code string, errno int, hostname string) *Error {
	return &Error{Code: code, Message: fmt.Sprintf("cannot resolve %s (%s)", hostname, code),
		Raw: NewObject("errno", float64(errno), "code", code, "syscall", "getaddrinfo", "hostname", hostname)}
}

func (e *Error) Error() string {
	if e.Path != "" {
		return e.Path + ": " + e.Message
	}
	return e.Message
}

// Protocols mockd serves.
var supportedProtocols = map[string]bool{"http": true, "https": true, "tcp": true, "smtp": true}

// Imposter is one decoded, validated imposter definition. Stubs and other nested values are
// kept as ordered JSON so the API echoes them as they were given.
type Imposter struct {
	Protocol        string
	Port            int // 0 until assigned
	Host            string
	Name            string
	RecordRequests  bool
	AllowCORS       bool
	DefaultResponse *Object // nil when absent
	Mode            string  // tcp: "text" or "binary"
	// Stubs are the stubs as parsed. imposter.New takes them, and sets Stubs to nil: a
	// running imposter's stubs are read through its methods.
	Stubs []*Object
	// Header is the creation request less its stubs, as Mountebank keeps it for printing.
	Header *Object
}

// ParseOptions tune ParseImposter.
type ParseOptions struct {
	// AllowInjection permits JavaScript and shell (Mountebank's --allowInjection).
	AllowInjection bool
	// Path prefixes every error path, e.g. "imposters[2]".
	Path string
	// Owned says the caller gives the value away (a request body it has just parsed): the
	// stubs keep its objects, upcast in place, rather than copies. Copying 100,000 stubs
	// doubled what building them allocated, and left the heap fragmented (the copies kept
	// alive among the freed originals).
	Owned bool
	// Behaviors, when set, validates a response's (upcast) behaviors as Mountebank's
	// behaviorsValidator does (behavior.Validate, which this package cannot import): in a stub
	// that fails for another reason (an injection refused, a repeat), their errors are listed
	// with the stub's others, as Mountebank's dry-run validator lists them
	// (the API sets it; config files have CheckImposter's positioned problems instead).
	// Unset, behaviors are checked only when the stub is compiled, and only if nothing else
	// failed.
	Behaviors func(Value) []*Error
	// Custom names the custom protocols (--protofile) an imposter may also have.
	Custom map[string]bool
	// DryRun, when set, compiles one stub of imp that passed validation and returns its
	// errors: when another stub fails validation, Mountebank still dry-runs the stubs that
	// pass and lists their errors with the failing stubs' (unset, they are left to the
	// compiler, which runs only once every stub passed).
	DryRun func(imp *Imposter, stub *Object) []*Error
}

// ParseImposter validates one imposter creation request as Mountebank's imposters controller does
// and returns its decoded form. It does not compile predicates; the imposter package does that.
func ParseImposter(v Value, opts ParseOptions) (*Imposter, []*Error) {
	obj, ok := v.(*Object)
	if !ok || obj == nil {
		return nil, []*Error{{Code: CodeBadData, Message: "'protocol' is a required field", Path: opts.Path}}
	}
	// Every field is copied before anything changes it, but the stubs: ParseStub copies them one
	// by one (tcp copies them first, below), so a large imposter is not copied twice; or, when
	// the caller owns v, nothing is copied.
	if !opts.Owned {
		src := obj
		obj = &Object{Members: make([]Member, len(src.Members))}
		for i, m := range src.Members {
			if m.Key != "stubs" {
				m.Value = Clone(m.Value)
			}
			obj.Members[i] = m
		}
	}
	var errs []*Error
	add := func(path, format string, args ...any) {
		errs = append(errs, &Error{Code: CodeBadData, Message: fmt.Sprintf(format, args...), Path: JoinPath(opts.Path, path)})
	}
	imp := &Imposter{}

	listenFails := false
	if pv, present := obj.Get("port"); present {
		port, ok := portValue(pv)
		switch {
		case pv == nil:
			// Mountebank 2.9.1 ends its process on it (port.toString() of null): refused as
			// the other values it cannot listen on, rather than taken as no port.
			add("port", "invalid value for 'port'")
		case ok:
		case listenRefuses(pv):
			listenFails = true
		default:
			add("port", "invalid value for 'port'")
		}
		imp.Port = port
	}
	switch p, present := obj.Get("protocol"); p := p.(type) {
	case nil:
		if present {
			// helpers.defined(null) is true: Mountebank looks the null protocol up.
			add("protocol", "the null protocol is not yet supported")
		} else {
			add("protocol", "'protocol' is a required field")
		}
	case string:
		if !supportedProtocols[p] && !opts.Custom[p] {
			add("protocol", "the %s protocol is not yet supported", p)
		}
		imp.Protocol = p
	default:
		add("protocol", "the %s protocol is not yet supported", jsvalue.String(p))
	}
	if len(errs) > 0 {
		return nil, errs
	}

	imp.Name = jsvalue.String(mustGet(obj, "name"))
	if !obj.Has("name") || mustGet(obj, "name") == nil {
		imp.Name = ""
	}
	imp.RecordRequests = jsvalue.Truthy(mustGet(obj, "recordRequests"))
	imp.AllowCORS = jsvalue.Truthy(mustGet(obj, "allowCORS"))
	imp.DefaultResponse = AsObject(mustGet(obj, "defaultResponse"))
	if h, ok := mustGet(obj, "host").(string); ok {
		imp.Host = h
	}
	imp.Mode = "text"
	if m, ok := mustGet(obj, "mode").(string); ok && m == "binary" {
		imp.Mode = "binary"
	}

	if imp.Protocol == "tcp" {
		if stubs, ok := obj.Get("stubs"); ok && !opts.Owned {
			obj.Set("stubs", Clone(stubs))
		}
		upcastTCPProxy(obj)
	}
	stubsVal := mustGet(obj, "stubs")
	// The header is every field but the stubs, which ParseStub copies one by one. obj is a copy
	// of its own (or owned) by now: the header takes its values as they are.
	header := &Object{Members: make([]Member, 0, len(obj.Members))}
	for _, m := range obj.Members {
		if m.Key != "stubs" {
			header.Members = append(header.Members, m)
		}
	}
	imp.Header = header

	switch s := stubsVal.(type) {
	case nil:
	case []any:
		var stubErrs [][]*Error // by stub, once one failed
		if len(s) > 0 {
			imp.Stubs = make([]*Object, 0, len(s))
		}
		for i, sv := range s {
			stub, serrs := ParseStub(sv, opts, JoinPath(opts.Path, stubPath(i)))
			if len(serrs) > 0 {
				if stubErrs == nil {
					stubErrs = make([][]*Error, len(s))
				}
				stubErrs[i] = serrs
			}
			if stub != nil {
				imp.Stubs = append(imp.Stubs, stub)
			}
		}
		if stubErrs != nil && opts.DryRun != nil && len(errs) == 0 {
			// Mountebank's validator dry-runs the stubs that passed (imp.Stubs, in order).
			k := 0
			for i := range stubErrs {
				if stubErrs[i] == nil && k < len(imp.Stubs) {
					stubErrs[i] = opts.DryRun(imp, imp.Stubs[k])
					k++
				}
			}
		}
		// Mountebank's validator concatenates the stubs' lists of errors in reverse.
		for i := len(stubErrs) - 1; i >= 0; i-- {
			errs = append(errs, stubErrs[i]...)
		}
	default:
		// `request.stubs || []`: a falsy value ("", 0, false) is no stubs.
		if jsvalue.Truthy(s) {
			add("stubs", "'stubs' must be an array")
		}
	}
	errs = append(errs, tcpErrors(obj, imp.Protocol, opts)...)
	if len(errs) > 0 {
		return nil, errs
	}
	if listenFails {
		return nil, []*Error{{Code: "ERR_INVALID_ARG_VALUE", Message: "invalid value for 'port'", Path: JoinPath(opts.Path, "port"),
			Raw: NewObject("code", "ERR_INVALID_ARG_VALUE")}}
	}
	return imp, nil
}

// listenRefuses reports whether port is a value Mountebank's validation lets through (its text
// has no '.', and as a number it lies between 0 and 65536) that node's listen then refuses with
// ERR_INVALID_ARG_VALUE, passed through with its code alone: true, or an array such as [4545].
func listenRefuses(port Value) bool {
	switch port.(type) {
	case bool, []any:
		n := jsvalue.Number(port)
		return !strings.Contains(jsvalue.String(port), ".") && n > 0 && n < 65536
	}
	return false
}

// stubPaths are the paths of a document's first stubs ("stubs[0]"…), made once: every
// POST /imposters names each of its stubs' (one allocation each).
var stubPaths = func() (p [16]string) {
	for i := range p {
		p[i] = "stubs[" + strconv.Itoa(i) + "]"
	}
	return p
}()

// stubPath is the path of the stub at place i of a document's stubs.
func stubPath(i int) string {
	if i < len(stubPaths) {
		return stubPaths[i]
	}
	return "stubs[" + strconv.Itoa(i) + "]"
}

// ParseStub validates one stub as Mountebank's dry-run validator does (responses, injection,
// repeat), upcasts old-style behaviors, and returns it. Predicates are checked when compiled.
func ParseStub(v Value, opts ParseOptions, path string) (*Object, []*Error) {
	obj, ok := v.(*Object)
	if !ok || obj == nil {
		return nil, []*Error{{Code: CodeBadData, Message: "'responses' must be a non-empty array", Source: v, Path: path}}
	}
	stub := obj
	if !opts.Owned {
		stub = Clone(obj).(*Object)
	}
	var errs []*Error
	if ev, ok := stub.Get("expect"); ok {
		_, eerrs := ParseExpect(ev, JoinPath(path, "expect"))
		errs = append(errs, eerrs...)
	}
	responses, _ := mustGet(stub, "responses").([]any)
	if len(responses) == 0 {
		return nil, append(errs, &Error{Code: CodeBadData, Message: "'responses' must be a non-empty array", Source: stub, Path: path})
	}
	for _, r := range responses {
		if ro, ok := r.(*Object); ok {
			upcastBehaviors(ro)
		}
	}
	if !opts.AllowInjection {
		if hasStubInjection(stub, responses) {
			errs = append(errs, &Error{Code: CodeInvalidInjection,
				Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag", Source: stub, Path: path})
		}
		if hasShellTransform(responses) {
			errs = append(errs, &Error{Code: CodeInvalidInjection,
				Message: "Shell execution is not allowed unless mb is run with the --allowInjection flag", Source: stub, Path: path})
		}
	}
	errs = append(errs, scenarioErrors(stub, path)...)
	// A stub that fails here lists each response's behavior errors, then its repeat error
	// (dryRunValidator's addBehaviorErrors). One that does not leaves its behaviors to the
	// compiler, which lists their errors with the other stubs' (Mountebank's dry run of the
	// stubs whose validation passed).
	badRepeat := func(r Value) bool {
		if _, isString := r.(string); isString {
			// A string's repeat is String.prototype.repeat, a function: not a valid repeat.
			return true
		}
		ro, ok := r.(*Object)
		if !ok {
			return false
		}
		rv, present := ro.Get("repeat")
		return present && !validRepeat(rv)
	}
	failing := len(errs) > 0
	for _, r := range responses {
		if badRepeat(r) {
			failing = true
		}
	}
	for i, r := range responses {
		if !failing {
			break
		}
		if ro, ok := r.(*Object); ok && opts.Behaviors != nil {
			if bv, present := ro.Get("behaviors"); present {
				errs = append(errs, opts.Behaviors(bv)...)
			}
		}
		if badRepeat(r) {
			errs = append(errs, &Error{Code: CodeBadData, Message: `"repeat" field must be an integer greater than 0`,
				Source: r, Path: fmt.Sprintf("%s.responses[%d].repeat", path, i)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return stub, nil
}

// scenarioErrors checks a stub's scenario keys (mockd's, as WireMock's): strings, and a state
// only with a scenario name.
func scenarioErrors(stub *Object, path string) []*Error {
	var errs []*Error
	for _, k := range []string{"scenarioName", "requiredScenarioState", "newScenarioState"} {
		if v, ok := stub.Get(k); ok {
			if s, isStr := v.(string); !isStr || s == "" {
				errs = append(errs, &Error{Code: CodeBadData, Message: fmt.Sprintf("%q must be a non-empty string", k), Source: stub, Path: JoinPath(path, k)})
			}
		}
	}
	if !stub.Has("scenarioName") {
		for _, k := range []string{"requiredScenarioState", "newScenarioState"} {
			if stub.Has(k) {
				errs = append(errs, &Error{Code: CodeBadData, Message: fmt.Sprintf("%q needs a \"scenarioName\"", k), Source: stub, Path: JoinPath(path, k)})
			}
		}
	}
	return errs
}

func validRepeat(v Value) bool {
	switch t := v.(type) {
	case nil:
		// typeof null is "object": Mountebank rejects it.
		return false
	case float64:
		return t > 0
	case string:
		n, ok := jsvalue.ParseInt(t)
		return !ok || n > 0 // parseInt gives NaN for non-numbers, and NaN <= 0 is false
	default:
		return false
	}
}

// Repeat returns how many times a response is used before moving on (Mountebank's repeat, default 1).
// Mountebank counts `for (j = 0; j < (repeat || 1); j++)`, so a fraction counts up (1.5 is used
// twice, "2.5" three times, 0.5 once), and a string its validation lets through (parseInt is
// not <= 0) that JavaScript's < reads as NaN or 0 (`"abc"`, `"2abc"`, `" "`) is used no times.
// A count past what a table can hold (Mountebank runs out of memory there) is used once.
func Repeat(response *Object) int {
	var f float64
	switch t := mustGet(response, "repeat").(type) {
	case float64:
		f = t
	case string:
		if t == "" {
			return 1 // falsy: repeat || 1
		}
		f = jsvalue.Number(t)
		if math.IsNaN(f) || f <= 0 {
			return 0
		}
	default:
		return 1
	}
	if f > 0 && f < math.MaxInt32 {
		return int(math.Ceil(f))
	}
	return 1
}

func portValue(v Value) (int, bool) {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case string:
		if strings.Contains(t, ".") {
			return 0, false
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, false
		}
		f = n
	default:
		return 0, false
	}
	if f != math.Trunc(f) || f <= 0 || f >= 65536 {
		return 0, false
	}
	return int(f), true
}

func mustGet(o *Object, key string) Value {
	v, _ := o.Get(key)
	return v
}

// upcastBehaviors turns Mountebank's old `_behaviors` object into the `behaviors` array, as its
// compatibility module does before storing a stub.
func upcastBehaviors(response *Object) {
	old := AsObject(mustGet(response, "_behaviors"))
	if old != nil {
		if st, ok := mustGet(old, "shellTransform").(string); ok {
			old.Set("shellTransform", []any{st})
		}
	}
	if old == nil || response.Has("behaviors") || response.Has("repeat") {
		// An array is an object to Mountebank too: it has none of the keys, so it becomes
		// no behaviors.
		if _, isArr := mustGet(response, "_behaviors").([]any); isArr && !response.Has("behaviors") && !response.Has("repeat") {
			response.Set("behaviors", []any{})
			response.Delete("_behaviors")
		}
		return
	}
	var list []any
	for _, key := range []string{"wait", "lookup", "copy", "shellTransform", "decorate"} {
		v, ok := old.Get(key)
		if !ok {
			continue
		}
		if arr, isArr := v.([]any); isArr {
			for _, e := range arr {
				list = append(list, NewObject(key, e))
			}
		} else {
			list = append(list, NewObject(key, v))
		}
	}
	if rv, ok := old.Get("repeat"); ok {
		response.Set("repeat", rv)
	}
	if list == nil {
		list = []any{}
	}
	response.Set("behaviors", list)
	response.Delete("_behaviors")
}

func behaviorsOf(response *Object) []any {
	b, _ := mustGet(response, "behaviors").([]any)
	return b
}

func hasBehavior(response *Object, kind string, filter func(Value) bool) bool {
	for _, b := range behaviorsOf(response) {
		bo := AsObject(b)
		if v, ok := bo.Get(kind); ok && (filter == nil || filter(v)) {
			return true
		}
	}
	return false
}

func hasStubInjection(stub *Object, responses []any) bool {
	for _, r := range responses {
		ro := AsObject(r)
		if ro == nil {
			continue
		}
		_, isString := mustGet(ro, "inject").(string)
		if jsvalue.Truthy(mustGet(ro, "inject")) || isString && ro.Has("inject") {
			return true
		}
		if hasBehavior(ro, "decorate", nil) || hasBehavior(ro, "wait", func(v Value) bool { _, s := v.(string); return s }) {
			return true
		}
		if proxy := AsObject(mustGet(ro, "proxy")); proxy != nil {
			if jsvalue.Truthy(mustGet(proxy, "addDecorateBehavior")) {
				return true
			}
			gens, _ := mustGet(proxy, "predicateGenerators").([]any)
			for _, g := range gens {
				if jsvalue.Truthy(mustGet(AsObject(g), "inject")) {
					return true
				}
			}
		}
	}
	return predicatesHaveInjection(mustGet(stub, "predicates"))
}

// predicatesHaveInjection mirrors Mountebank's check, which looks one level into the predicates
// array for an `inject` key.
func predicatesHaveInjection(v Value) bool {
	switch t := v.(type) {
	case []any:
		for _, p := range t {
			if jsvalue.Truthy(mustGet(AsObject(p), "inject")) {
				return true
			}
		}
	case *Object:
		for _, m := range t.Members {
			if jsvalue.Truthy(mustGet(AsObject(m.Value), "inject")) {
				return true
			}
		}
	}
	return false
}

func hasShellTransform(responses []any) bool {
	for _, r := range responses {
		if ro := AsObject(r); ro != nil && hasBehavior(ro, "shellTransform", nil) {
			return true
		}
	}
	return false
}

var (
	stubKeys     = []string{"predicates", "responses", "expect", "_links", "matches", "scenarioName", "requiredScenarioState", "newScenarioState"}
	responseKeys = []string{"is", "proxy", "inject", "fault", "repeat", "behaviors", "_behaviors"}
)

func unknownKeys(o *Object, path string, known []string) []*Error {
	var errs []*Error
	for _, m := range o.Members {
		found := false
		for _, k := range known {
			if k == m.Key {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, &Error{Code: CodeBadData, Path: JoinPath(path, m.Key),
				Message: fmt.Sprintf("unknown field %q (expected one of: %s)", m.Key, strings.Join(known, ", "))})
		}
	}
	return errs
}
