package config

import "github.com/mockd/mockd/internal/jsvalue"

// upcastTCPProxy turns the old tcp proxy destination {host, port} into "tcp://host:port", as
// Mountebank's compatibility module does for tcp imposters.
func upcastTCPProxy(imposter *Object) {
	stubs, _ := mustGet(imposter, "stubs").([]any)
	for _, s := range stubs {
		responses, _ := mustGet(AsObject(s), "responses").([]any)
		for _, r := range responses {
			proxy := AsObject(mustGet(AsObject(r), "proxy"))
			if proxy == nil {
				continue
			}
			to := AsObject(mustGet(proxy, "to"))
			if to == nil {
				continue
			}
			host, port := mustGet(to, "host"), mustGet(to, "port")
			if jsvalue.Truthy(host) && jsvalue.Truthy(port) {
				proxy.Set("to", "tcp://"+jsvalue.String(host)+":"+jsvalue.String(port))
			}
		}
	}
}

// tcpErrors returns the imposter-level errors Mountebank adds after the stubs' errors: an
// endOfRequestResolver injection without --allowInjection, then tcp's own validation of mode.
func tcpErrors(imposter *Object, protocol string, opts ParseOptions) []*Error {
	var errs []*Error
	if eor := AsObject(mustGet(imposter, "endOfRequestResolver")); eor != nil && jsvalue.Truthy(mustGet(eor, "inject")) && !opts.AllowInjection {
		errs = append(errs, &Error{Code: CodeInvalidInjection,
			Message: "JavaScript injection is not allowed unless mb is run with the --allowInjection flag",
			Source:  eor, Path: JoinPath(opts.Path, "endOfRequestResolver")})
	}
	if protocol == "tcp" {
		if m := mustGet(imposter, "mode"); jsvalue.Truthy(m) && m != "text" && m != "binary" {
			errs = append(errs, &Error{Code: CodeBadData, Message: "'mode' must be one of ['text', 'binary']",
				Path: JoinPath(opts.Path, "mode")})
		}
	}
	return errs
}
