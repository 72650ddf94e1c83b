package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/schema"
)

// newHealthcheckCmd checks a running mockd from the outside, with no shell or curl: a Docker
// HEALTHCHECK on a distroless image, or a CI step waiting for the imposters.
func newHealthcheckCmd() *cobra.Command {
	c := &adminClient{}
	var imposters bool
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the admin API answers (and, with --imposters, every imposter accepts connections), else 1",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := c.call(http.MethodGet, "/imposters", nil)
			if err != nil {
				return fmt.Errorf("healthcheck: GET /imposters: %w", err)
			}
			var list struct {
				Imposters []struct {
					Port     int    `json:"port"`
					Protocol string `json:"protocol"`
				} `json:"imposters"`
			}
			if err := json.Unmarshal(data, &list); err != nil {
				return fmt.Errorf("healthcheck: GET /imposters: answer is not the imposter list: %w", err)
			}
			if imposters {
				for _, imp := range list.Imposters {
					conn, err := net.DialTimeout("tcp", net.JoinHostPort(c.host, strconv.Itoa(imp.Port)), c.timeout)
					if err != nil {
						return fmt.Errorf("healthcheck: %s imposter %d: %w", imp.Protocol, imp.Port, err)
					}
					_ = conn.Close()
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s answers with %d imposters\n", c.base(), len(list.Imposters))
			return nil
		},
	}
	c.register(cmd)
	cmd.Flags().BoolVar(&imposters, "imposters", false, "also check that every imposter's port accepts connections")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 5*time.Second, "time limit of each check")
	return cmd
}

func newSchemaCmd() *cobra.Command {
	var protofile string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of mockd's config files (for editors)",
		Long: "Print the JSON Schema of mockd's YAML and Mountebank JSON config files. Point your editor at it,\n" +
			"e.g. with a first line `# yaml-language-server: $schema=mockd.schema.json` after `mockd schema > mockd.schema.json`.\n" +
			"With --protofile, imposters of the file's custom protocols may hold any field (their programs read them).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			if protofile != "" {
				specs, err := readProtofile(protofile)
				if err != nil {
					return err
				}
				for _, s := range specs {
					names = append(names, s.Name)
				}
			}
			out, err := schema.WithProtocols(names)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&protofile, "protofile", "", "JSON file of custom protocols (as serve's --protofile): the schema accepts their imposters")
	return cmd
}
