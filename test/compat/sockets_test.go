package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"strings"
	"time"
)

// tcpStep writes bytes to a tcp imposter on a fresh connection and reads what comes back.
type tcpStep struct {
	Port json.RawMessage `json:"port"` // a number or "${name}"
	// Data is sent as is, or base64-decoded when Base64 is true.
	Data   string `json:"data"`
	Base64 bool   `json:"base64,omitempty"`
	// Packets, when set, are sent one after another on the same connection (each as Data is),
	// with ReadMS between them to read each answer; the answers are concatenated.
	Packets []string `json:"packets,omitempty"`
	// ReadMS bounds how long to wait for an answer (default 600 ms); reading also stops 150 ms
	// after the last byte arrived, or when the server closes the connection.
	ReadMS int `json:"readMs,omitempty"`
	// Fill, when set, makes the (only) packet a large request: Data followed by Fill.Bytes bytes
	// of 'x', written in pieces of Fill.Piece bytes (default 16 KiB) a few milliseconds apart, so
	// that it reaches the server as many packets.
	Fill *tcpFill `json:"fill,omitempty"`
	// CloseWrite, when true, shuts the client's sending side (FIN) after the last packet is
	// written, before its answer is read: a half-closed client.
	CloseWrite bool `json:"closeWrite,omitempty"`
	// FinWithData, with CloseWrite, sends the last packet and the FIN in one segment (Linux: the
	// socket corked while both are queued), so the server finds the client shut down when it
	// reads the request. Without it a loaded machine may let a quick answer (a shellTransform's
	// printf) be written between the client's write and its shutdown; corked, the client has to
	// be held past Linux's 200 ms cork ceiling between the two calls for that.
	FinWithData bool `json:"finWithData,omitempty"`
}

type tcpFill struct {
	Bytes int `json:"bytes"`
	Piece int `json:"piece,omitempty"`
}

// smtpStep sends one message to an smtp imposter with Go's net/smtp client (no STARTTLS).
type smtpStep struct {
	Port    json.RawMessage `json:"port"`
	From    string          `json:"from"`
	To      []string        `json:"to"`
	Message string          `json:"message"` // "\n" is sent as CRLF
}

func stepPort(raw json.RawMessage, v vars) (string, error) {
	var port string
	if err := json.Unmarshal(raw, &port); err != nil {
		port = string(raw)
	}
	return v.expand(port, false)
}

// exchange plays a tcp step: the answer's body is the bytes read, and its pseudo-header "end"
// says how reading ended: "quiet" (the server kept the connection open), "closed" or "reset".
func (s *tcpStep) exchange(v vars) exchange {
	port, err := stepPort(s.Port, v)
	if err != nil {
		return exchange{Err: err.Error()}
	}
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, ioTimeout)
	if err != nil {
		return exchange{Err: "connect: " + classifyNetErr(err)}
	}
	defer conn.Close()
	packets := s.Packets
	if packets == nil {
		packets = []string{s.Data}
	}
	wait := time.Duration(s.ReadMS) * time.Millisecond
	if wait == 0 {
		wait = 600 * time.Millisecond
	}
	var got []byte
	for i, p := range packets {
		data := []byte(p)
		if s.Base64 {
			if data, err = decodeBase64(p); err != nil {
				return exchange{Err: err.Error()}
			}
		}
		last := i == len(packets)-1
		if s.FinWithData && s.CloseWrite && last {
			if err := cork(conn.(*net.TCPConn), true); err != nil {
				return tcpAnswer(got, "cork: "+err.Error())
			}
		}
		if err := s.write(conn, data); err != nil {
			return tcpAnswer(got, "write: "+classifyNetErr(err))
		}
		if s.CloseWrite && last {
			if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
				return tcpAnswer(got, "close write: "+classifyNetErr(err))
			}
		}
		more, end := readAnswer(conn, wait)
		got = append(got, more...)
		if end != "quiet" {
			return tcpAnswer(got, end)
		}
	}
	return tcpAnswer(got, "quiet")
}

// write sends one packet's data, with Fill's filler after it in pieces.
func (s *tcpStep) write(conn net.Conn, data []byte) error {
	if s.Fill == nil {
		_, err := conn.Write(data)
		return err
	}
	data = append(data, bytes.Repeat([]byte{'x'}, s.Fill.Bytes)...)
	piece := s.Fill.Piece
	if piece <= 0 {
		piece = 16 << 10
	}
	for len(data) > 0 {
		n := min(piece, len(data))
		if _, err := conn.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func tcpAnswer(body []byte, end string) exchange {
	return exchange{Headers: []header{{"end", end}}, Body: body}
}

// readAnswer reads until the server closes ("closed"), resets ("reset") or goes quiet ("quiet":
// nothing for wait before the first byte, or for 150 ms after one).
func readAnswer(conn net.Conn, wait time.Duration) ([]byte, string) {
	var got []byte
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(wait)
	for {
		_ = conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if n > 0 {
			deadline = time.Now().Add(150 * time.Millisecond)
		}
		if err == nil {
			continue
		}
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return got, "quiet"
		case errors.Is(err, io.EOF):
			return got, "closed"
		case strings.Contains(err.Error(), "reset"):
			return got, "reset"
		default:
			return got, "read: " + classifyNetErr(err)
		}
	}
}

// exchange plays an smtp step; the body is "sent" or the client's error.
func (s *smtpStep) exchange(v vars) exchange {
	port, err := stepPort(s.Port, v)
	if err != nil {
		return exchange{Err: err.Error()}
	}
	fail := func(stage string, err error) exchange {
		return exchange{Body: []byte(fmt.Sprintf("%s: %v", stage, err))}
	}
	c, err := smtp.Dial("127.0.0.1:" + port)
	if err != nil {
		return exchange{Err: "connect: " + classifyNetErr(err)}
	}
	defer c.Close()
	if err := c.Hello("compat.test"); err != nil {
		return fail("hello", err)
	}
	if err := c.Mail(s.From); err != nil {
		return fail("mail", err)
	}
	for _, to := range s.To {
		if err := c.Rcpt(to); err != nil {
			return fail("rcpt", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fail("data", err)
	}
	if _, err := io.WriteString(w, strings.ReplaceAll(s.Message, "\n", "\r\n")); err != nil {
		return fail("data", err)
	}
	if err := w.Close(); err != nil {
		return fail("data", err)
	}
	if err := c.Quit(); err != nil {
		return fail("quit", err)
	}
	return exchange{Body: []byte("sent")}
}
