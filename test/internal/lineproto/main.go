// Command lineproto is a tiny Mountebank custom protocol for the tests: a line-based tcp
// protocol whose program resolves every line it receives through mockd's (or mb's) callback
// URL, as mb's custom protocols do.
//
// Run as a protofile's createCommand: `lineproto [MODE] ARGS-JSON` (mb appends the JSON).
// Each line a client sends is POSTed as {"request": {"data": LINE, "requestFrom": …}}; the
// answer's response.data is written back with a newline. A proxy answer is resolved by the
// program itself, the "origin" answering "origin:LINE", which it POSTs to the callbackURL
// before writing the final data. The first line on stdout is {"port": N, "greeting": …,
// "args": ARGS-JSON, …}. It listens on 127.0.0.1, or on the args' host (mockd's --host).
//
// MODE: "fail" exits 3 before printing anything; "silent" prints nothing and waits; "child"
// starts a `sleep` child of its own and prints its pid in the metadata (to check that
// stopping the imposter stops the program's children too); "plain" prints a word rather than
// JSON as its first line (so the port must come from the creation request); "linger" binds its
// port, prints nothing, and exits a second after SIGTERM (a program slow to stop).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type args struct {
	Port                json.RawMessage `json:"port"`
	CallbackURLTemplate string          `json:"callbackURLTemplate"`
	Loglevel            string          `json:"loglevel"`
	AllowInjection      bool            `json:"allowInjection"`
	Greeting            string          `json:"greeting"`
	Host                string          `json:"host"` // mockd's --host, when the request names none
}

func main() {
	mode := ""
	if len(os.Args) == 3 {
		mode = os.Args[1]
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: lineproto [MODE] ARGS-JSON")
		os.Exit(2)
	}
	var a args
	if err := json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &a); err != nil {
		fmt.Fprintln(os.Stderr, "bad arguments:", err)
		os.Exit(2)
	}
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "failing on purpose")
		os.Exit(3)
	case "silent":
		time.Sleep(time.Hour)
		return
	}
	term := make(chan os.Signal, 1)
	if mode == "linger" { // caught before the port is bound: a client that sees it bound may stop it
		signal.Notify(term, syscall.SIGTERM)
	}
	port := 0
	if len(a.Port) > 0 {
		port, _ = strconv.Atoi(string(a.Port))
	}
	host := "127.0.0.1"
	if a.Host != "" && a.Host != "localhost" {
		host = a.Host
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	if mode == "linger" {
		<-term
		time.Sleep(time.Second)
		os.Exit(0)
	}
	callback := strings.ReplaceAll(a.CallbackURLTemplate, ":port", strconv.Itoa(port))
	meta := map[string]any{"port": port, "greeting": a.Greeting, "encoding": "utf8", "pid": os.Getpid(), "args": os.Args[len(os.Args)-1]}
	if mode == "child" {
		child := exec.Command("sleep", "3600")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		meta["childPid"] = child.Process.Pid
	}
	if mode == "plain" {
		fmt.Println("lineproto")
	} else {
		line, _ := json.Marshal(meta)
		fmt.Println(string(line))
	}
	fmt.Println("info lineproto listening on " + strconv.Itoa(port))
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c, callback)
	}
}

func serve(c net.Conn, callback string) {
	defer c.Close()
	r := bufio.NewScanner(c)
	for r.Scan() {
		line := r.Text()
		req := map[string]any{"data": line, "requestFrom": c.RemoteAddr().String(), "ip": c.RemoteAddr().(*net.TCPAddr).IP.String()}
		var answer map[string]any
		if err := post(callback, map[string]any{"request": req}, &answer); err != nil {
			fmt.Fprintf(c, "error: %v\n", err)
			continue
		}
		resp, ok := answer["response"].(map[string]any)
		if !ok {
			if url, isProxy := answer["callbackURL"].(string); isProxy {
				var proxied map[string]any
				if err := post(url, map[string]any{"proxyResponse": map[string]any{"data": "origin:" + line}}, &proxied); err != nil {
					fmt.Fprintf(c, "error: %v\n", err)
					continue
				}
				resp = proxied
			} else {
				b, _ := json.Marshal(answer)
				fmt.Fprintf(c, "unexpected: %s\n", b)
				continue
			}
		}
		data, _ := resp["data"].(string)
		fmt.Fprintln(c, data)
	}
}

func post(url string, body any, into any) error {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return fmt.Errorf("%d %s", resp.StatusCode, buf.String())
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
