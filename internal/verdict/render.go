package verdict

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes the verdict as JUnit XML: one test suite per imposter, with one test case per
// stub expectation, per unused stub (skipped when allowUnused) and per request that matched no
// stub.
func (v *Verdict) JUnit(w io.Writer, allowUnused bool) error {
	doc := junitSuites{Name: "mockd verify"}
	for i := range v.Imposters {
		im := &v.Imposters[i]
		suite := junitSuite{Name: im.Label()}
		add := func(c junitCase) {
			c.Classname = im.Label()
			suite.Cases = append(suite.Cases, c)
			suite.Tests++
			if c.Failure != nil {
				suite.Failures++
			}
			if c.Skipped != nil {
				suite.Skipped++
			}
		}
		for j := range im.Stubs {
			s := &im.Stubs[j]
			switch {
			case len(s.Expect) > 0:
				c := junitCase{Name: fmt.Sprintf("stub %d %s expects %s", s.Index, s.Describe(), compact(s.Expect))}
				if s.Status == Failed {
					c.Failure = &junitFailure{Message: s.Message, Type: "expectation", Text: s.Message}
				}
				add(c)
			case s.Status == Unused:
				c := junitCase{Name: fmt.Sprintf("stub %d %s is used", s.Index, s.Describe())}
				if allowUnused {
					c.Skipped = &junitSkipped{Message: s.Message}
				} else {
					c.Failure = &junitFailure{Message: s.Message, Type: "unused stub", Text: s.Message}
				}
				add(c)
			}
		}
		for j := range im.Unmatched {
			u := &im.Unmatched[j]
			add(junitCase{Name: u.Describe() + " matches a stub",
				Failure: &junitFailure{Message: "matched no stub", Type: "unmatched request", Text: u.Why + "\n" + string(u.Request)}})
		}
		if n := im.UnmatchedRequests - len(im.Unmatched); n > 0 {
			msg := fmt.Sprintf("%d request(s) matched no stub (turn recordRequests on to see them and why)", n)
			add(junitCase{Name: "every request matches a stub", Failure: &junitFailure{Message: msg, Type: "unmatched request", Text: msg}})
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// GitHub writes one ::error workflow command per problem to annotations and a Markdown job
// summary (for $GITHUB_STEP_SUMMARY) to summary.
func (v *Verdict) GitHub(annotations, summary io.Writer, allowUnused bool) {
	problems := v.Problems(allowUnused)
	for _, p := range problems {
		fmt.Fprintf(annotations, "::error title=mockd verify::%s\n", escapeCommand(p.Text))
	}
	status := "passed"
	if !v.Passed {
		status = "failed"
	}
	fmt.Fprintf(summary, "### mockd verify: %s\n\n", status)
	fmt.Fprintln(summary, "| imposter | expectations | failed | unused stubs | unmatched requests |")
	fmt.Fprintln(summary, "|---|--:|--:|--:|--:|")
	for i := range v.Imposters {
		im := &v.Imposters[i]
		var exp, failed, unused int
		for _, s := range im.Stubs {
			if len(s.Expect) > 0 {
				exp++
			}
			switch s.Status {
			case Failed:
				failed++
			case Unused:
				unused++
			}
		}
		fmt.Fprintf(summary, "| %s | %d | %d | %d | %d |\n", markdownCell(im.Label()), exp, failed, unused, im.UnmatchedRequests)
	}
	if len(problems) > 0 {
		fmt.Fprintln(summary)
		for _, p := range problems {
			fmt.Fprintf(summary, "- %s\n", markdownCell(p.Text))
		}
	}
	fmt.Fprintln(summary)
}

// escapeCommand escapes a workflow command's message as GitHub's toolkit does.
func escapeCommand(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}
