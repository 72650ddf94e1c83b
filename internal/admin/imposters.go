package admin

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
)

var started = time.Now()

func (a *API) parseOptions() config.ParseOptions {
	return config.ParseOptions{AllowInjection: a.opts.AllowInjection, Behaviors: imposter.ValidateBehaviors,
		Custom: a.opts.Custom, DryRun: a.dryRunFunc}
}

// dryRun compiles one stub of imp alone, without starting anything, and returns its errors
// (config.ParseOptions.DryRun): what Mountebank's dry run reports for a stub that passed
// validation beside one that failed.
func (a *API) dryRun(imp *config.Imposter, stub *config.Object) []*config.Error {
	one := *imp
	one.Stubs = []*config.Object{stub}
	_, err := a.reg.Build(&one)
	return errorList(err)
}

// errorList is a dry run's error as the list Mountebank's validator adds to its others: none
// for an error that is not Mountebank's (403 insufficient access).
func errorList(err error) []*config.Error {
	if err == nil {
		return nil
	}
	var list config.Errors
	if errors.As(err, &list) {
		return list
	}
	var ce *config.Error
	if errors.As(err, &ce) && ce.Code != config.CodeInsufficient {
		return []*config.Error{ce}
	}
	return nil
}

// bodyOptions are parseOptions for a value parsed from the request's body, which nothing else
// holds: its stubs are kept, not copied.
func (a *API) bodyOptions() config.ParseOptions {
	opts := a.parseOptions()
	opts.Owned = true
	return opts
}

func (a *API) listImposters(ctx *fasthttp.RequestCtx) *apiError {
	opts := a.printOptions(ctx)
	opts.List = !(opts.Replayable || opts.RemoveProxies)
	// As sendFormatted, from the last rendering when nothing it shows changed: clients and
	// dashboards poll GET /imposters.
	varyAccept(ctx)
	if !opts.List && !opts.Replayable && journalBytes(a.reg.Listing().Imposters) > streamAbove {
		sendStream(ctx, 200, config.NewObject("imposters", a.render(a.reg.Listing().Imposters, opts)))
		return nil
	}
	body, list := a.formattedList(opts)
	if body == nil { // larger than renderWhole: the list rendered, streamed
		sendStream(ctx, 200, list)
		return nil
	}
	jsonHead(ctx, 200)
	ctx.Response.SetBodyRaw(body)
	return nil
}

// journalBytes sums the imposters' JournalBytes.
func journalBytes(list []*imposter.Imposter) int {
	n := 0
	for _, im := range list {
		n += im.JournalBytes()
	}
	return n
}

// renderedList is the last GET /imposters body and what it was rendered from.
type renderedList struct {
	listing   *imposter.Listing
	opts      PrintOptions
	revisions []revision // of listing.Imposters, read before rendering
	body      []byte     // never written again once stored
}

type revision struct {
	requests int64
	changes  uint64
}

// formattedList returns the imposters list as the admin API sends it (indented by 2). As
// formatted, it renders again only when the set of imposters or a revision of one changed
// since the last call with the same options; the body must not be modified. A list larger
// than renderWhole is neither rendered whole nor kept: the body is then nil, and list the
// value to stream (what it shows read once).
func (a *API) formattedList(opts PrintOptions) (body []byte, list config.Value) {
	listing := a.reg.Listing()
	if r := a.listed.Load(); r != nil && r.listing == listing && r.opts == opts && current(r.revisions, listing.Imposters) {
		return r.body, nil
	}
	revs := make([]revision, len(listing.Imposters))
	for i, im := range listing.Imposters {
		revs[i].requests, revs[i].changes = im.Revision()
	}
	c := &config.Chunker{Limit: renderWhole}
	list = config.NewObject("imposters", a.render(listing.Imposters, opts))
	body = config.RenderJSON(nil, list, 2, c)
	if c.Err != nil {
		a.listed.Store(nil)
		return nil, list
	}
	a.listed.Store(&renderedList{listing: listing, opts: opts, revisions: revs, body: body})
	return body, nil
}

// current reports whether every imposter is still at the revision revs holds for it.
func current(revs []revision, list []*imposter.Imposter) bool {
	for i, im := range list {
		if n, c := im.Revision(); revs[i].requests != n || revs[i].changes != c {
			return false
		}
	}
	return true
}

func (a *API) render(list []*imposter.Imposter, opts PrintOptions) []any {
	out := make([]any, 0, len(list))
	for _, im := range list {
		out = append(out, printImposter(im, opts))
	}
	return out
}

func (a *API) createImposter(ctx *fasthttp.RequestCtx) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	def, errs := config.ParseImposter(body, a.bodyOptions())
	if len(errs) > 0 {
		return badRequest(errs...)
	}
	im, err := a.reg.Create(def)
	if err != nil {
		return toAPIError(err, nil)
	}
	a.sendCreated(ctx, im)
	return nil
}

// sendCreated answers the creation of im (201, its JSON, Location).
func (a *API) sendCreated(ctx *fasthttp.RequestCtx, im *imposter.Imposter) {
	base := a.baseURL(ctx)
	var loc [96]byte // the Location written in place: no string of its own
	// SetCanonical: SetBytesV's, without normalising the key (canonical already).
	ctx.Response.Header.SetCanonical(headerLocation, strconv.AppendInt(append(append(loc[:0], base...), "/imposters/"...), int64(im.Port()), 10))
	opts := PrintOptions{BaseURL: base}
	n, c := im.Revision() // before rendering: see formatted
	stubs, reqs := im.Stubs(true), requestList(im, false)
	if config.StreamBytes(reqs) > 0 {
		a.created.Store(nil) // recorded requests already (a config's imposter): not kept
		send(ctx, 201, printStubs(im, stubs, opts))
		return
	}
	var buf []byte
	if p := a.echoBuf.Swap(nil); p != nil {
		buf = (*p)[:0]
	}
	echo := appendImposter(buf, im, stubs, reqs, opts, nil)
	if len(echo) > maxEchoKept {
		a.created.Store(nil)
		jsonHead(ctx, 201)
		sendRendered(ctx, echo)
		return
	}
	jsonHead(ctx, 201)
	ctx.Response.SetBody(echo) // a copy: the kept one is only the DELETE's to read
	a.created.Store(&createdEcho{serial: im.Serial(), requests: n, changes: c, opts: opts, body: echo})
}

// headerLocation is the Location header's name, as fasthttp's SetCanonical takes it.
var headerLocation = []byte("Location")

// createdEcho is the answer to the last POST /imposters, which its DELETE /imposters/:port
// sends again while nothing changed in between (the same revision and print options): a
// client suite creates and deletes an imposter around each test, and both answers show the
// imposter. It keeps the imposter's serial, not the imposter: a deleted imposter is released
// whatever deleted it (a weak pointer cost ~900 instructions and an allocation a POST).
type createdEcho struct {
	serial   uint64 // imposter.Serial
	requests int64
	changes  uint64
	opts     PrintOptions
	body     []byte
}

// maxEchoKept bounds the answer to a POST kept for its DELETE.
const maxEchoKept = 64 << 10

// sendEcho answers the DELETE of im with opts with the answer to the POST that created im, if
// it is kept and would be the same; it reports whether it did. The answer is forgotten either
// way, and its buffer kept for the next POST's.
func (a *API) sendEcho(ctx *fasthttp.RequestCtx, im *imposter.Imposter, opts PrintOptions) bool {
	e := a.created.Load()
	if e == nil || e.serial != im.Serial() || !a.created.CompareAndSwap(e, nil) {
		return false
	}
	defer a.echoBuf.Store(&e.body) // no one else has it: the POST sent a copy
	if n, c := im.Revision(); n != e.requests || c != e.changes || e.opts != opts {
		return false
	}
	jsonHead(ctx, 200)
	ctx.Response.SetBody(e.body)
	return true
}

func (a *API) replaceImposters(ctx *fasthttp.RequestCtx) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	obj := config.AsObject(body)
	if obj == nil || !obj.Has("imposters") {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'imposters' is a required field"})
	}
	list, isArray := get(obj, "imposters").([]any)
	if !isArray && jsvalue.Truthy(get(obj, "imposters")) {
		// Mountebank's process dies on this ({}, "x", 1, true); a falsy value empties the
		// list there and here. Nothing running is touched.
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'imposters' must be an array"})
	}
	built := make([]*imposter.Imposter, 0, len(list))
	var all []*config.Error
	for _, v := range list {
		def, errs := config.ParseImposter(v, a.bodyOptions())
		all = append(all, errs...)
		if def == nil {
			continue
		}
		im, err := a.reg.Build(def)
		if err != nil {
			all = append(all, toAPIError(err, nil).errs...)
			continue
		}
		built = append(built, im)
	}
	if len(all) > 0 {
		return badRequest(all...)
	}
	ims, err := a.reg.ReplaceAll(built)
	if err != nil {
		return toAPIError(err, nil)
	}
	a.forgetUnreadable(0)
	send(ctx, 200, config.NewObject("imposters", a.render(ims, PrintOptions{BaseURL: a.baseURL(ctx), List: true})))
	return nil
}

func (a *API) deleteImposters(ctx *fasthttp.RequestCtx) *apiError {
	opts := a.printOptions(ctx)
	// Mountebank defaults to replayable here, for backwards compatibility.
	v := ctx.QueryArgs().Peek("replayable")
	opts.Replayable = v == nil || string(bytesLower(v)) != "false"
	rendered := a.render(a.reg.All(), opts)
	a.reg.DeleteAll()
	a.forgetUnreadable(0)
	send(ctx, 200, config.NewObject("imposters", rendered))
	return nil
}

func bytesLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

func (a *API) getImposter(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	// As sendFormatted, from the imposter's cached rendering, or streamed.
	varyAccept(ctx)
	opts := a.printOptions(ctx)
	if !opts.Replayable && im.JournalBytes() > streamAbove {
		streamImposter(ctx, im, opts)
		return nil
	}
	body := a.formatted(im, opts)
	if body == nil { // larger than renderWhole
		streamImposter(ctx, im, opts)
		return nil
	}
	jsonHead(ctx, 200)
	ctx.Response.SetBodyRaw(body)
	return nil
}

func (a *API) deleteImposter(ctx *fasthttp.RequestCtx, id string) *apiError {
	im := a.lookup(id)
	if im == nil {
		if port, ok := canonicalInt(id); ok {
			a.reg.Delete(port) // one whose program starts stops (Registry.Reserve)
			a.forgetUnreadable(port)
		}
		send(ctx, 200, &config.Object{})
		return nil
	}
	opts := a.printOptions(ctx)
	if a.sendEcho(ctx, im, opts) {
		a.reg.Delete(im.Port())
		return nil
	}
	rendered := printImposter(im, opts)
	a.reg.Delete(im.Port())
	send(ctx, 200, rendered)
	return nil
}

func (a *API) deleteSavedProxyResponses(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	if err := im.ReplaceStubs(withoutRecordedResponses(im.StubDefinitions())); err != nil {
		return toAPIError(err, nil)
	}
	sendFormatted(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

// withoutRecordedResponses drops responses a proxy recorded (an `is` with _proxyResponseTime),
// and stubs left with none, as Mountebank's deleteSavedProxyResponses does.
func withoutRecordedResponses(stubs []*config.Object) []*config.Object {
	out := make([]*config.Object, 0, len(stubs))
	for _, s := range stubs {
		c := config.Clone(s).(*config.Object)
		list, _ := get(c, "responses").([]any)
		kept := make([]any, 0, len(list))
		for _, r := range list {
			is := config.AsObject(get(config.AsObject(r), "is"))
			if _, recorded := get(is, "_proxyResponseTime").(float64); is != nil && recorded {
				continue
			}
			kept = append(kept, r)
		}
		if len(kept) == 0 {
			continue
		}
		c.Set("responses", kept)
		out = append(out, c)
	}
	return out
}

func (a *API) deleteSavedRequests(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	if err := im.ClearRequests(ctx); err != nil {
		return storeUnavailable(err)
	}
	sendFormatted(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

// checkStubs validates new stubs as Mountebank's dry run does, without changing anything.
func (a *API) checkStubs(im *imposter.Imposter, values []any) ([]*config.Object, *apiError) {
	opts := a.bodyOptions()
	stubs := make([]*config.Object, 0, len(values))
	var perStub [][]*config.Error // by stub, once one failed
	for i, v := range values {
		s, errs := config.ParseStub(v, opts, "")
		if len(errs) > 0 {
			if perStub == nil {
				perStub = make([][]*config.Error, len(values))
			}
			perStub[i] = errs
		}
		if s != nil {
			stubs = append(stubs, s)
		}
	}
	if perStub != nil {
		// Mountebank's validator dry-runs the stubs that passed (stubs, in order) and
		// concatenates the stubs' lists of errors in reverse.
		k := 0
		for i := range perStub {
			if perStub[i] == nil && k < len(stubs) {
				perStub[i] = errorList(im.CheckStubs(stubs[k : k+1]))
				k++
			}
		}
		var all []*config.Error
		for i := len(perStub) - 1; i >= 0; i-- {
			all = append(all, perStub[i]...)
		}
		return nil, badRequest(all...)
	}
	if err := im.CheckStubs(stubs); err != nil {
		var source config.Value
		if len(stubs) == 1 {
			source = string(config.MarshalJSON(stubs[0], 0))
		}
		return nil, toAPIError(err, source)
	}
	return stubs, nil
}

func (a *API) replaceStubs(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	v, present := config.AsObject(body).Get("stubs")
	if !present {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'stubs' is a required field"})
	}
	list, isList := v.([]any)
	if !isList {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'stubs' must be an array"})
	}
	stubs, aerr := a.checkStubs(im, list)
	if aerr != nil {
		return aerr
	}
	if err := im.ReplaceStubs(stubs); err != nil {
		return toAPIError(err, nil)
	}
	send(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

func (a *API) addStub(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	obj := config.AsObject(body)
	count := im.StubCount()
	index := count
	var errs []*config.Error
	if iv, present := obj.Get("index"); present {
		// Mountebank checks a number between 0 and the count and splices there, so a
		// fraction inserts at its integer part (1.5 before the stub at 1).
		f, isNum := iv.(float64)
		if !isNum || f < 0 || f > float64(count) {
			errs = append(errs, &config.Error{Code: config.CodeBadData, Message: "'index' must be between 0 and the length of the stubs array"})
		} else {
			index = int(f)
		}
	}
	stubVal, present := obj.Get("stub")
	if !present {
		errs = append(errs, &config.Error{Code: config.CodeBadData, Message: "must contain 'stub' field"})
	}
	if len(errs) > 0 {
		return badRequest(errs...)
	}
	stubs, aerr := a.checkStubs(im, []any{stubVal})
	if aerr != nil {
		return aerr
	}
	if aerr := a.checkStubsIndent(im, stubs[0], -1); aerr != nil {
		return aerr
	}
	if err := im.InsertStub(stubs[0], index); err != nil {
		return toAPIError(err, nil)
	}
	send(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

// stubIndex parses a :stubIndex path segment as Mountebank looks it up: the canonical form of an
// existing index.
func stubIndex(im *imposter.Imposter, s string) (int, *apiError) {
	n, err := strconv.Atoi(s)
	if err != nil || strconv.Itoa(n) != s || n < 0 || n >= im.StubCount() {
		return 0, &apiError{status: 404, errs: []*config.Error{{Code: config.CodeBadData,
			Message: "'stubIndex' must be a valid integer, representing the array index position of the stub to replace"}}}
	}
	return n, nil
}

func (a *API) replaceStub(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
	index, aerr := stubIndex(im, rest[1])
	if aerr != nil {
		return aerr
	}
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	stubs, aerr := a.checkStubs(im, []any{body})
	if aerr != nil {
		return aerr
	}
	if aerr := a.checkStubsIndent(im, stubs[0], index); aerr != nil {
		return aerr
	}
	if err := im.ReplaceStub(stubs[0], index); err != nil {
		return toAPIError(err, nil)
	}
	send(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

func (a *API) deleteStub(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
	index, aerr := stubIndex(im, rest[1])
	if aerr != nil {
		return aerr
	}
	if err := im.DeleteStub(index); err != nil {
		return toAPIError(err, nil)
	}
	send(ctx, 200, printImposter(im, PrintOptions{BaseURL: a.baseURL(ctx)}))
	return nil
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

func processInfo() *config.Object {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	cwd, _ := os.Getwd()
	return config.NewObject(
		"goVersion", runtime.Version(),
		"architecture", runtime.GOARCH,
		"platform", runtime.GOOS,
		"rss", float64(ms.Sys),
		"heapTotal", float64(ms.HeapSys),
		"heapUsed", float64(ms.HeapAlloc),
		"uptime", float64(time.Since(started).Milliseconds())/1000,
		"cwd", cwd,
	)
}
