package metrics

import (
	"bytes"
	"runtime"
	"runtime/debug"
	rm "runtime/metrics"
	"time"
)

// goSamples are the runtime/metrics the go_* metrics are made of.
var goSamples = []string{
	"/memory/classes/heap/objects:bytes",          // 0
	"/gc/heap/allocs:bytes",                       // 1
	"/memory/classes/profiling/buckets:bytes",     // 2
	"/gc/heap/frees:objects",                      // 3
	"/gc/heap/tiny/allocs:objects",                // 4
	"/memory/classes/metadata/other:bytes",        // 5
	"/memory/classes/heap/released:bytes",         // 6
	"/memory/classes/heap/free:bytes",             // 7
	"/memory/classes/heap/unused:bytes",           // 8
	"/gc/heap/objects:objects",                    // 9
	"/gc/heap/allocs:objects",                     // 10
	"/memory/classes/metadata/mcache/inuse:bytes", // 11
	"/memory/classes/metadata/mcache/free:bytes",  // 12
	"/memory/classes/metadata/mspan/inuse:bytes",  // 13
	"/memory/classes/metadata/mspan/free:bytes",   // 14
	"/gc/heap/goal:bytes",                         // 15
	"/memory/classes/other:bytes",                 // 16
	"/memory/classes/heap/stacks:bytes",           // 17
	"/memory/classes/os-stacks:bytes",             // 18
	"/memory/classes/total:bytes",                 // 19
	"/gc/gogc:percent",                            // 20
	"/gc/gomemlimit:bytes",                        // 21
	"/sched/gomaxprocs:threads",                   // 22
}

// writeGo writes the go_* metrics Prometheus' Go collector writes by default, with its names,
// help texts and sources.
func writeGo(b *bytes.Buffer) {
	s := make([]rm.Sample, len(goSamples))
	for i, name := range goSamples {
		s[i].Name = name
	}
	rm.Read(s)
	v := func(i int) float64 {
		switch s[i].Value.Kind() {
		case rm.KindUint64:
			return float64(s[i].Value.Uint64())
		case rm.KindFloat64:
			return s[i].Value.Float64()
		}
		return 0
	}
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)

	writeHead(b, "go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		writeSample(b, "go_gc_duration_seconds", `quantile="`+q+`"`, gc.PauseQuantiles[i].Seconds())
	}
	writeSample(b, "go_gc_duration_seconds_sum", "", gc.PauseTotal.Seconds())
	writeSample(b, "go_gc_duration_seconds_count", "", float64(gc.NumGC))
	gauge(b, "go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", "gauge", v(20))
	gauge(b, "go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", "gauge", v(21))
	gauge(b, "go_goroutines", "Number of goroutines that currently exist.", "gauge", float64(runtime.NumGoroutine()))
	writeHead(b, "go_info", "Information about the Go environment.", "gauge")
	writeSample(b, "go_info", `version="`+escapeLabel(runtime.Version())+`"`, 1)
	gauge(b, "go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", "gauge", v(0))
	gauge(b, "go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", "counter", v(1))
	gauge(b, "go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", "gauge", v(2))
	gauge(b, "go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", "counter", v(3)+v(4))
	gauge(b, "go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", "gauge", v(5))
	gauge(b, "go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", "gauge", v(0))
	gauge(b, "go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge", v(6)+v(7))
	gauge(b, "go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", "gauge", v(0)+v(8))
	gauge(b, "go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", "gauge", v(9))
	gauge(b, "go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", "gauge", v(6))
	gauge(b, "go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge", v(0)+v(8)+v(6)+v(7))
	lastGC := 0.0
	if !gc.LastGC.IsZero() {
		lastGC = float64(gc.LastGC.UnixNano()) / 1e9
	}
	gauge(b, "go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", lastGC)
	gauge(b, "go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", "counter", v(10)+v(4))
	gauge(b, "go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", "gauge", v(11))
	gauge(b, "go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", "gauge", v(11)+v(12))
	gauge(b, "go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", "gauge", v(13))
	gauge(b, "go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", "gauge", v(13)+v(14))
	gauge(b, "go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", "gauge", v(15))
	gauge(b, "go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", "gauge", v(16))
	gauge(b, "go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", "gauge", v(17))
	gauge(b, "go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", "gauge", v(17)+v(18))
	gauge(b, "go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", "gauge", v(19))
	gauge(b, "go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", "gauge", v(22))
	threads, _ := runtime.ThreadCreateProfile(nil)
	gauge(b, "go_threads", "Number of OS threads created.", "gauge", float64(threads))
}
