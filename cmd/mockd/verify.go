package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/internal/verdict"
)

func newVerifyCmd() *cobra.Command {
	c := &adminClient{}
	var junit string
	var github, allowUnused bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the running mockd's stub expectations, unused stubs and unmatched requests; exit 1 when any fails",
		Long: `verify asks a running mockd for its verdict (GET /verify): the stubs whose expect was not met,
the stubs that answered no request and the requests that matched no stub, with why. It prints
the verdict and exits 1 when it fails (2 when it cannot ask).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := "/verify"
			if allowUnused {
				path += "?allowUnused=true"
			}
			data, err := c.call(http.MethodGet, path, nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, "mockd verify:", err)
				return exitError{code: 2}
			}
			var v verdict.Verdict
			if err := json.Unmarshal(data, &v); err != nil {
				fmt.Fprintf(os.Stderr, "mockd verify: GET %s: answer is not a verdict: %v\n", path, err)
				return exitError{code: 2}
			}
			out := cmd.OutOrStdout()
			if github {
				v.GitHub(out, githubSummary(), allowUnused)
			}
			v.Text(out, allowUnused)
			if junit != "" {
				if err := writeVerdict(junit, &v, allowUnused); err != nil {
					fmt.Fprintln(os.Stderr, "mockd verify:", err)
					return exitError{code: 2}
				}
			}
			if !v.Passed {
				return exitError{code: 1}
			}
			return nil
		},
	}
	c.register(cmd)
	cmd.Flags().StringVar(&junit, "junit", "", "also write the verdict as JUnit XML to this file")
	cmd.Flags().BoolVar(&github, "github", false, "print GitHub Actions ::error annotations and append a Markdown summary to $GITHUB_STEP_SUMMARY")
	cmd.Flags().BoolVar(&allowUnused, "allow-unused", false, "let stubs that answered no request pass")
	return cmd
}

// githubSummary is where the job summary goes: $GITHUB_STEP_SUMMARY, appended to, or nowhere.
func githubSummary() *summaryFile {
	return &summaryFile{path: os.Getenv("GITHUB_STEP_SUMMARY")}
}

// summaryFile appends to a file named by path, opening it on the first write; with no path it
// discards.
type summaryFile struct {
	path string
	f    *os.File
	err  error
}

func (s *summaryFile) Write(p []byte) (int, error) {
	if s.path == "" {
		return len(p), nil
	}
	if s.f == nil && s.err == nil {
		s.f, s.err = os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.f.Write(p)
}

// writeVerdict writes v to file: JUnit XML when the name ends in .xml, else JSON.
func writeVerdict(file string, v *verdict.Verdict, allowUnused bool) error {
	var b strings.Builder
	if strings.EqualFold(filepath.Ext(file), ".xml") {
		if err := v.JUnit(&b, allowUnused); err != nil {
			return err
		}
	} else {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		b.Write(append(data, '\n'))
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("cannot write the verdict: %w", err)
	}
	return nil
}
