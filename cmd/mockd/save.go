package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mockd/mockd/internal/config"
)

// adminClient talks to a running mockd (or Mountebank) as `mb save` and `mb replay` do.
type adminClient struct {
	host, apikey string
	rcfile       string
	port         int
	timeout      time.Duration // per request; 0 = 5 minutes
}

func (c *adminClient) register(cmd *cobra.Command) {
	cmd.Flags().IntVarP(&c.port, "port", "p", 2525, "admin port of the running mockd")
	cmd.Flags().StringVarP(&c.host, "host", "h", "localhost", "host of the running mockd")
	cmd.Flags().StringVar(&c.apikey, "apikey", "", "sent in the x-api-key header")
	registerRCFile(cmd.Flags(), &c.rcfile)
	mbHelpFlag(cmd) // -h is --host, as in mb
}

// applyRCFile reads --rcfile into the flags the command line did not set.
func (c *adminClient) applyRCFile(cmd *cobra.Command) error {
	return applyRCFile(cmd, c.rcfile, cmd.ErrOrStderr())
}

func (c *adminClient) base() string {
	return "http://" + net.JoinHostPort(c.host, strconv.Itoa(c.port))
}

// call sends one admin request and returns the body of a 200 answer; anything else is an error
// that names the status and body, or the missing server.
func (c *adminClient) call(method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(method, c.base()+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Close = true
	if c.apikey != "" {
		req.Header.Set("x-api-key", c.apikey)
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("no mockd (or Mountebank) is running on %s", c.base())
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%d\n%s", resp.StatusCode, data)
	}
	return data, nil
}

// replayable fetches every imposter as GET /imposters?replayable=true[&removeProxies=true].
func (c *adminClient) replayable(removeProxies bool) (config.Value, error) {
	path := "/imposters?replayable=true"
	if removeProxies {
		path += "&removeProxies=true"
	}
	data, err := c.call(http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	v, err := config.ParseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("GET %s: answer is not JSON: %w", path, err)
	}
	return v, nil
}

func newSaveCmd() *cobra.Command {
	c := &adminClient{}
	var savefile, formatter string
	var removeProxies bool
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Save the running imposters to a config file (as `mb save`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.applyRCFile(cmd); err != nil {
				return err
			}
			if err := checkFormatter(formatter); err != nil {
				return err
			}
			v, err := c.replayable(removeProxies)
			if err != nil {
				return err
			}
			return replaceFile(savefile, config.MarshalJSON(v, 2))
		},
	}
	c.register(cmd)
	cmd.Flags().StringVar(&savefile, "savefile", "mb.json", "file to save imposters to")
	cmd.Flags().BoolVarP(&removeProxies, "removeProxies", "r", false, "leave proxy responses out of the saved file")
	registerFormatter(cmd.Flags(), &formatter)
	return cmd
}

func newReplayCmd() *cobra.Command {
	c := &adminClient{}
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Switch from record mode to replay by removing proxies (as `mb replay`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.applyRCFile(cmd); err != nil {
				return err
			}
			v, err := c.replayable(true)
			if err != nil {
				return err
			}
			_, err = c.call(http.MethodPut, "/imposters", config.MarshalJSON(v, 2))
			return err
		},
	}
	c.register(cmd)
	return cmd
}
