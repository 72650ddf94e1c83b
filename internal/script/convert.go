package script

import (
	"fmt"
	"math"

	"github.com/dop251/goja"

	"github.com/mockd/mockd/internal/config"
)

// maxDepth bounds the conversion of nested values between Go and JavaScript; deeper values
// (or cycles) become null, where Mountebank's JSON.stringify would throw.
const maxDepth = 200

// toJS converts a configuration value to a JavaScript value in vm.
func toJS(vm *goja.Runtime, v config.Value) goja.Value {
	switch t := v.(type) {
	case nil:
		return goja.Null()
	case string, float64, bool:
		return vm.ToValue(v) // v, not t: a string would be boxed once more
	case *config.Object:
		if t == nil {
			return goja.Null()
		}
		o := vm.NewObject()
		for _, m := range t.Members {
			_ = o.Set(m.Key, toJS(vm, m.Value))
		}
		return o
	case []any:
		items := make([]any, len(t))
		for i, e := range t {
			items[i] = toJS(vm, e)
		}
		return vm.NewArray(items...)
	default:
		return vm.ToValue(config.FromPlain(t))
	}
}

// fromJS converts a JavaScript value to a configuration value as JSON.stringify followed by
// JSON.parse would: undefined, functions and symbols are dropped from objects (null in arrays),
// non-finite numbers become null, and toJSON methods (Date, Buffer) are honoured. The second
// result is false when the value itself would be dropped.
func fromJS(rt *runtime, v goja.Value, depth int) (config.Value, bool) {
	if v == nil || goja.IsUndefined(v) {
		return nil, false
	}
	if goja.IsNull(v) {
		return nil, true
	}
	if depth == 0 {
		rt.convLeft = rt.memMax
	}
	o, isObj := v.(*goja.Object)
	if !isObj {
		if s, isStr := v.(goja.String); isStr {
			if rt.memMax > 0 {
				// The strings of one conversion are bounded by the memory limit: a string
				// doubled to 512 MiB in the call's last instructions was copied into the
				// answer (1 GB) before the watch's next look.
				if rt.convLeft -= int64(s.Length()); rt.convLeft < 0 {
					rt.outOfMemory()
				}
			}
			return s.String(), true // not through Export, which boxes the string once more
		}
		switch x := v.Export().(type) {
		case string:
			return x, true
		case bool:
			return x, true
		case int64:
			return float64(x), true
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, true
			}
			return x, true
		default:
			if _, sym := v.(*goja.Symbol); sym {
				return nil, false
			}
			return v.String(), true
		}
	}
	if depth > maxDepth {
		return nil, true
	}
	if rt.stopping.Load() {
		// An interrupt is pending: a Go loop over a shared graph (o = {a: o, b: o}, forty
		// times over) would go on past both limits. Calling the prelude's toJSON runs the
		// interpreter, which lets the interrupt through.
		if stop, ok := goja.AssertFunction(rt.arrayToJSON); ok {
			if _, err := stop(o); err != nil {
				panic(err)
			}
		}
	}
	if l := rt.lazyOf(o); l != nil {
		return l.export(depth), true
	}
	if _, fn := goja.AssertFunction(o); fn {
		return nil, false
	}
	// (an array's toJSON is the prelude's, which answers the array: its length is checked below)
	if tjo, isObj := o.Get("toJSON").(*goja.Object); isObj && tjo != rt.arrayToJSON {
		tj, ok := goja.AssertFunction(tjo)
		if !ok {
			goto plain
		}
		r, err := tj(o)
		if err != nil {
			// thrown on, as JSON.stringify throws it; the time limit's interrupt ends the
			// conversion (it was read as null, and an endless toJSON answered 200 once timed out)
			panic(err)
		}
		return fromJS(rt, r, depth+1)
	}
plain:
	switch o.ClassName() {
	case "Array":
		n := int(o.Get("length").ToInteger())
		if n > rt.maxElements() {
			// an array of 1e9 holes was a Go loop of 1e9 reads into a slice of 16 GB, which
			// no limit stops (see node.go's prelude for the built-ins)
			e, _ := rt.vm.New(rt.vm.Get("RangeError"), rt.vm.ToValue(fmt.Sprintf("Invalid array length: %d elements are more than one operation may go through (%d, see --script-memory)", n, rt.maxElements())))
			panic(e)
		}
		arr := make([]any, n)
		for i := 0; i < n; i++ {
			e, ok := fromJS(rt, o.Get(itoa(i)), depth+1)
			if ok {
				arr[i] = e
			}
		}
		return arr, true
	case "String", "Number", "Boolean":
		return fromJS(rt, rt.vm.ToValue(o.Export()), depth+1)
	}
	keys := o.Keys()
	obj := config.ObjectWithRoom(len(keys))
	for _, k := range keys {
		e, ok := fromJS(rt, o.Get(k), depth+1)
		if ok {
			obj.Members = append(obj.Members, config.Member{Key: k, Value: e})
		}
	}
	return obj, true
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
