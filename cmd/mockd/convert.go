package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/internal/app"
	"github.com/mockd/mockd/internal/config"
)

func newConvertCmd() *cobra.Command {
	var to, out string
	var keepEnv bool
	cmd := &cobra.Command{
		Use:   "convert FILE",
		Short: "Convert Mountebank JSON to mockd YAML and back, losslessly",
		Long: "convert reads a Mountebank JSON file (imposters.json) and writes it as YAML, or reads a\n" +
			"YAML file and writes Mountebank JSON. Both load to the identical imposters: YAML's\n" +
			"${ENV} references are resolved (unless --keep-env) and bodyFile is inlined as body.\n" +
			"YAML is checked strictly: what only Mountebank's lenient reading of JSON takes (a key it\n" +
			"ignores, a statusCode of 1000) is written as it is and listed on standard error.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			v, err := readForConvert(file, keepEnv)
			if err != nil {
				return err
			}
			target := strings.ToLower(to)
			if target == "" {
				target = "yaml"
				if config.IsYAML(file) {
					target = "json"
				}
			}
			if config.IsYAML(file) && target == "json" {
				// Mountebank JSON requires the protocol that YAML defaults to http.
				config.DefaultProtocol(v)
				// Mountebank JSON has no bodyFile: the file's text goes in body.
				if err := config.InlineBodyFiles(v, filepath.Dir(file)); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
			}
			var data []byte
			switch target {
			case "yaml", "yml":
				if data, err = config.MarshalYAML(v); err != nil {
					return err
				}
			case "json":
				data = append(config.MarshalJSON(v, 2), '\n')
			default:
				return errors.New("--to must be yaml or json")
			}
			if out == "" || out == "-" {
				if _, err = cmd.OutOrStdout().Write(data); err != nil {
					return err
				}
			} else if err := replaceFile(out, data); err != nil {
				return fmt.Errorf("cannot write %s: %w", out, err)
			}
			if !config.IsYAML(file) && (target == "yaml" || target == "yml") {
				warnStrictYAML(cmd, file, out, data)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "yaml or json (default: the other format)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write here instead of standard output")
	cmd.Flags().BoolVar(&keepEnv, "keep-env", false, "keep YAML's ${ENV} references as written instead of resolving them")
	return cmd
}

// readForConvert reads a config file as convert sees it: YAML with its ${ENV} references
// resolved, or kept with keepEnv; JSON as Mountebank reads it.
func readForConvert(file string, keepEnv bool) (config.Value, error) {
	if !keepEnv || !config.IsYAML(file) {
		v, _, err := config.ReadFile(file)
		return v, err
	}
	data, err := config.ReadLimited(file)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read config: %w", file, err)
	}
	v, _, err := config.ParseYAMLKeepEnv(data)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid YAML: %w", file, err)
	}
	return v, nil
}

// warnStrictYAML tells, on standard error, what of a Mountebank JSON file that mockd loads its
// YAML conversion (data, written to out) will not load with: YAML is checked strictly (every
// key, type and range), Mountebank JSON is read as Mountebank reads it, so a key Mountebank
// ignores or a status of 1000 converts faithfully but is refused as YAML. Nothing is said for a
// JSON file that does not load either.
func warnStrictYAML(cmd *cobra.Command, file, out string, data []byte) {
	if _, _, err := app.Check([]string{file}, true, nil); err != nil {
		return
	}
	name := out
	if name == "" || name == "-" {
		name = "<stdout>.yaml"
	}
	if _, err := app.CheckDocument(name, data, true); err != nil {
		msg := err.Error()
		if name != out {
			msg = strings.ReplaceAll(msg, name+":", "stdout:")
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "mockd convert: warning: %s loads as Mountebank JSON, but its YAML will not load until these are fixed "+
			"(YAML is checked strictly; see README, \"YAML\"):\n%s\n", file, msg)
	}
}
