package imposter

import "time"

var timeZero = time.Unix(0, 0)
