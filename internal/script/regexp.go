package script

import (
	"time"

	"github.com/dlclark/regexp2/v2"
)

// RegexpMatchTimeout bounds one match of a script's regular expression that goja runs on its
// ECMAScript engine (regexp2: a pattern with a lookaround or a backreference, which RE2 cannot
// run). regexp2's matches run in Go, where neither script limit can interrupt them:
// /^(a+)+(?=b)\1$/.test('a'.repeat(40) + 'c') backtracked for hours past --script-timeout, its
// request unanswered. A match past this bound counts as no match (goja reads regexp2's timeout
// as one), as a predicate's matches does past its own bound (match.MatchTimeout); the
// instruction after it lets the time limit's pending interrupt through, so a call ends at most
// this much after its limit.
const RegexpMatchTimeout = time.Second

// goja compiles its regexp2 patterns with regexp2's default timeout, which it gives no way to
// set (mockd's own regexp2 patterns, match's and behavior's, set theirs). It is set here, before
// any pattern is compiled (an init runs before anything of the process reads it).
func init() { regexp2.DefaultMatchTimeout = RegexpMatchTimeout }
