package script

import (
	"errors"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
)

// MsgPredicateGenerator is Mountebank's message for a failed injected predicateGenerator.
const MsgPredicateGenerator = "invalid predicateGenerator injection"

// PredicateGenerator runs an injected proxy predicateGenerator as Mountebank's responseResolver
// does, `(fn)(config)` with config {request, logger}, and returns the predicates it returned.
// req is the request as the proxy saw it; it is not changed. A failure, or a result that is not
// an array, is a *config.Error with code "invalid injection".
func (s *Scope) PredicateGenerator(source string, req *config.Object) ([]any, error) {
	rt := s.enter(source, kindGenerator)
	defer s.leaveStateless(rt)
	src := "(" + source + ")(config);"
	fn, err := s.function(rt, source)
	if err != nil {
		return nil, injectionError(MsgPredicateGenerator, src, err)
	}
	cfg := rt.vm.NewObject()
	_ = cfg.Set("request", toJS(rt.vm, req))
	_ = cfg.Set("logger", rt.logger)
	v, err := fn(goja.Undefined(), cfg)
	if err != nil {
		return nil, injectionError(MsgPredicateGenerator, src, err)
	}
	var out config.Value
	if ex := rt.vm.Try(func() { out, _ = fromJS(rt, v, 0) }); ex != nil {
		return nil, injectionError(MsgPredicateGenerator, src, ex)
	}
	list, ok := out.([]any)
	if !ok {
		// predicates.push(...eval(injected)) throws for anything that is not iterable, with
		// V8's message.
		msg := "Spread syntax requires ...iterable[Symbol.iterator] to be a function"
		switch {
		case v == nil || goja.IsUndefined(v):
			msg = "eval(...) is not iterable (cannot read property undefined)"
		case goja.IsNull(v):
			msg = "eval(...) is not iterable (cannot read property null)"
		}
		return nil, injectionError(MsgPredicateGenerator, src, errors.New(msg))
	}
	return list, nil
}
