//go:build unix

package behavior

import "syscall"

// openNonblock opens without waiting for a FIFO's writer.
const openNonblock = syscall.O_NONBLOCK
