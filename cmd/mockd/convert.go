package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/internal/config"
)

func newConvertCmd() *cobra.Command {
	var to, out string
	cmd := &cobra.Command{
		Use:   "convert FILE",
		Short: "Convert Mountebank JSON to mockd YAML and back, losslessly",
		Long: "convert reads a Mountebank JSON file (imposters.json) and writes it as YAML, or reads a\n" +
			"YAML file and writes Mountebank JSON. Both load to the identical imposters.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _, err := config.ReadFile(args[0])
			if err != nil {
				return err
			}
			target := strings.ToLower(to)
			if target == "" {
				target = "yaml"
				if config.IsYAML(args[0]) {
					target = "json"
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
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return fmt.Errorf("cannot write %s: %w", out, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "yaml or json (default: the other format)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write here instead of standard output")
	return cmd
}
