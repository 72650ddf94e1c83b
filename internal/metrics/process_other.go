//go:build !linux

package metrics

import (
	"bytes"
	"time"
)

// start approximates the process's start: when the package was initialised.
var start = time.Now()

// writeProcess writes the process metrics mockd can read without /proc: its start time. (On
// Linux it writes those of Prometheus' process collector.)
func writeProcess(b *bytes.Buffer) {
	gauge(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", float64(start.UnixNano())/1e9)
}
