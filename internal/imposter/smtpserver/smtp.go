// Package smtpserver accepts mail as Mountebank's smtp imposter (node's smtp-server) does and
// records each message, parsed into Mountebank's shape (mailparser's: addresses, text, html,
// attachments), with the imposter core.
package smtpserver

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/request"
)

// smtpMaxLine bounds one SMTP command line; longer lines end the session.
const smtpMaxLine = 64 << 10

// SMTP is the smtp protocol.
func SMTP(*config.Imposter) (imposter.Prepared, error) {
	return imposter.Prepared{New: func(im *imposter.Imposter) imposter.Server { return newServer(im) }}, nil
}

// server accepts mail and records each message as a request.
type server struct {
	im       *imposter.Imposter
	hostname string
	maxSize  int

	netconn.Server
}

func newServer(im *imposter.Imposter) *server {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	s := &server{im: im, hostname: host, maxSize: im.MaxBody()}
	s.Server = netconn.Server{Log: im.Log(), Handle: s.handle}
	return s
}

// handle serves conn; it marks conn idle while it waits for a command (closed first when the
// process runs out of file descriptors, see netconn.ReclaimIdle), busy from a command on,
// a message included.
func (s *server) handle(conn net.Conn, idle *netconn.IdleMark) {
	ip, from := request.NodeAddr(conn.RemoteAddr(), true)
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok && !s.im.Admit(a.IP) {
		s.im.Blocked(ip)
		return
	}
	sess := &smtpSession{
		srv:  s,
		ip:   ip,
		from: from,
		idle: idle,
		r:    bufio.NewReaderSize(conn, 4096),
		w:    bufio.NewWriter(conn),
		deadline: func() {
			_ = conn.SetDeadline(time.Now().Add(s.im.IdleTimeout()))
		},
	}
	sess.run()
}

// smtpSession is one SMTP conversation. It is not safe for concurrent use.
type smtpSession struct {
	srv      *server
	ip, from string // the client's address, and with its port
	idle     *netconn.IdleMark
	r        *bufio.Reader
	w        *bufio.Writer
	deadline func()

	greeted  bool
	mailFrom *string
	rcptTo   []string
	// rcptBytes is what rcptTo's addresses cost, each its length and rcptCost, which
	// --max-body bounds as it does the message: 3 million RCPT commands took 420 MB.
	rcptBytes int
}

// rcptCost is what keeping one recipient costs besides its address's bytes (its slot in rcptTo
// and the slice's growth, the rounding of the address's allocation), counted with it: counted
// by its address alone, a recipient of one byte (`RCPT TO:<a>`) took 75 bytes, so the 64 MiB
// of --max-body let 64 million recipients take 4.8 GB.
const rcptCost = 64

func (ss *smtpSession) reply(lines ...string) bool {
	for _, l := range lines {
		ss.w.WriteString(l)
		ss.w.WriteString("\r\n")
	}
	return ss.w.Flush() == nil
}

// readLine reads one CRLF- (or LF-) terminated line without its terminator; it fails on a line
// longer than smtpMaxLine.
func (ss *smtpSession) readLine() (string, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := ss.r.ReadLine()
		if err != nil {
			return "", err
		}
		buf = append(buf, chunk...)
		if len(buf) > smtpMaxLine {
			return "", errors.New("line too long")
		}
		if !isPrefix {
			return string(buf), nil
		}
	}
}

func (ss *smtpSession) run() {
	if ss.deadline != nil {
		ss.deadline()
	}
	if !ss.reply("220 " + ss.srv.hostname + " ESMTP") {
		return
	}
	for {
		if ss.deadline != nil {
			ss.deadline()
		}
		if ss.idle != nil {
			ss.idle.Idle()
		}
		line, err := ss.readLine()
		if err != nil {
			return
		}
		if ss.idle != nil {
			ss.idle.Busy()
		}
		if !ss.command(line) {
			return
		}
	}
}

// command handles one command line; it returns false when the session is over.
func (ss *smtpSession) command(line string) bool {
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToUpper(verb) {
	case "EHLO":
		if arg == "" {
			return ss.reply("501 Error: syntax: EHLO hostname")
		}
		ss.greeted, ss.mailFrom, ss.rcptTo, ss.rcptBytes = true, nil, nil, 0
		return ss.reply("250-"+ss.srv.hostname+" Nice to meet you, ["+ss.ip+"]", "250-PIPELINING", "250-8BITMIME", "250 SMTPUTF8")
	case "HELO":
		if arg == "" {
			return ss.reply("501 Error: syntax: HELO hostname")
		}
		ss.greeted, ss.mailFrom, ss.rcptTo, ss.rcptBytes = true, nil, nil, 0
		return ss.reply("250 " + ss.srv.hostname + " Nice to meet you, [" + ss.ip + "]")
	case "MAIL":
		switch {
		case !ss.greeted:
			return ss.reply("503 Error: send HELO/EHLO first")
		case ss.mailFrom != nil:
			return ss.reply("503 Error: nested MAIL command")
		}
		addr, ok := smtpAddress(arg, "FROM:")
		if !ok {
			return ss.reply("501 Error: Bad sender address syntax")
		}
		addr = strings.Clone(addr) // not the line it is in (see RCPT)
		ss.mailFrom = &addr
		return ss.reply("250 Accepted")
	case "RCPT":
		switch {
		case !ss.greeted:
			return ss.reply("503 Error: send HELO/EHLO first")
		case ss.mailFrom == nil:
			return ss.reply("503 Error: need MAIL command")
		}
		addr, ok := smtpAddress(arg, "TO:")
		if !ok || addr == "" {
			return ss.reply("501 Error: Bad recipient address syntax")
		}
		// The first recipient is taken whatever its cost: a message needs one, and a
		// --max-body below rcptCost still takes a message of that size.
		if len(ss.rcptTo) > 0 && ss.rcptBytes+len(addr)+rcptCost > ss.srv.maxSize {
			return ss.reply("452 Error: too many recipients")
		}
		// A copy: the address is part of its command line, which may go on for 64 KiB past
		// it (`RCPT TO:<a> xxx…`), and which it would keep whole: 2,000 such recipients took
		// 120 MB, counted as 2,000 bytes.
		ss.rcptTo = append(ss.rcptTo, strings.Clone(addr))
		ss.rcptBytes += len(addr) + rcptCost
		return ss.reply("250 Accepted")
	case "DATA":
		switch {
		case !ss.greeted:
			return ss.reply("503 Error: send HELO/EHLO first")
		case len(ss.rcptTo) == 0:
			return ss.reply("503 Error: need RCPT command")
		}
		if !ss.reply("354 End data with <CR><LF>.<CR><LF>") {
			return false
		}
		msg, tooLarge, err := ss.readData()
		if err != nil {
			return false
		}
		if tooLarge {
			// As smtp-server answers a message past its size option; the next one starts anew.
			ss.mailFrom, ss.rcptTo, ss.rcptBytes = nil, nil, 0
			ss.srv.im.Log().Warn("smtp message too large; refused with 552", "client", ss.from, "max", ss.srv.maxSize)
			return ss.reply("552 Error: message exceeds fixed maximum message size " + strconv.Itoa(ss.srv.maxSize))
		}
		ss.srv.receive(ss.ip, ss.from, *ss.mailFrom, ss.rcptTo, msg)
		ss.mailFrom, ss.rcptTo, ss.rcptBytes = nil, nil, 0
		return ss.reply("250 OK: message queued")
	case "RSET":
		ss.mailFrom, ss.rcptTo, ss.rcptBytes = nil, nil, 0
		return ss.reply("250 Flushed")
	case "NOOP":
		return ss.reply("250 OK")
	case "VRFY":
		return ss.reply("252 Try to send something. No promises though")
	case "HELP":
		return ss.reply("214 See https://tools.ietf.org/html/rfc5321 for details")
	case "QUIT":
		ss.reply("221 Bye")
		return false
	default:
		return ss.reply("500 Error: command not recognized")
	}
}

// readData reads a dot-terminated message, undoing dot-stuffing, with CRLF line ends. Its lines
// are bounded only by the message's size, not by smtpMaxLine: smtp-server (Mountebank's) reads
// DATA with no line limit, and a message with a long line (base64 or HTML written without line
// breaks) ended the session. A message (CRLF line ends included) past maxSize is read to its end and dropped: tooLarge,
// and memory stays bounded however long it goes on.
func (ss *smtpSession) readData() (msg []byte, tooLarge bool, err error) {
	var buf bytes.Buffer
	for {
		for first := true; ; first = false {
			if ss.deadline != nil {
				ss.deadline() // a client sending a long line is not idle
			}
			chunk, isPrefix, err := ss.r.ReadLine()
			if err != nil {
				return nil, false, err
			}
			if first {
				if !isPrefix && len(chunk) == 1 && chunk[0] == '.' {
					if tooLarge {
						return nil, true, nil
					}
					return buf.Bytes(), false, nil
				}
				if len(chunk) > 0 && chunk[0] == '.' {
					chunk = chunk[1:]
				}
			}
			if !tooLarge && buf.Len()+len(chunk) > ss.srv.maxSize {
				tooLarge, buf = true, bytes.Buffer{} // what was read is let go now
			}
			if !tooLarge {
				buf.Write(chunk)
			}
			if !isPrefix {
				break
			}
		}
		if !tooLarge && buf.Len()+2 > ss.srv.maxSize {
			tooLarge, buf = true, bytes.Buffer{}
		}
		if !tooLarge {
			buf.WriteString("\r\n")
		}
	}
}

// smtpAddress parses "FROM:<a@b.c> PARAMS" (prefix "FROM:") as smtp-server does.
func smtpAddress(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if strings.HasPrefix(rest, "<") {
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return "", false
		}
		return strings.TrimSpace(rest[1:end]), true
	}
	addr, _, _ := strings.Cut(rest, " ")
	if !strings.Contains(addr, "@") {
		return "", false
	}
	return addr, true
}

// receive counts and records one message, as Mountebank's smtp imposter does.
func (s *server) receive(ip, from, envelopeFrom string, envelopeTo []string, msg []byte) {
	im := s.im
	im.Count()
	record := im.Records()
	info := im.LogEnabled(slog.LevelInfo)
	if !record && !info {
		return
	}
	req := smtpRequest(ip, envelopeFrom, envelopeTo, msg)
	if info {
		im.LogLine(slog.LevelInfo, from+" => Envelope from: "+string(config.MarshalJSON(get(req, "from"), 0))+
			" to: "+string(config.MarshalJSON(get(req, "to"), 0)))
	}
	if im.LogEnabled(slog.LevelDebug) {
		im.LogLine(slog.LevelDebug, from+" => "+string(config.MarshalJSON(req, 0)))
	}
	if record {
		im.RecordObject(req)
	}
}

func get(o *config.Object, key string) config.Value {
	v, _ := o.Get(key)
	return v
}

// smtpRequest renders a message in Mountebank's recorded shape (smtpRequest.js over
// mailparser's simpleParser).
func smtpRequest(ip, envelopeFrom string, envelopeTo []string, msg []byte) *config.Object {
	to := make([]any, 0, len(envelopeTo))
	for _, a := range envelopeTo {
		to = append(to, a)
	}
	o := config.NewObject("requestFrom", ip, "ip", ip, "envelopeFrom", envelopeFrom, "envelopeTo", to)
	m, err := mail.ReadMessage(bytes.NewReader(msg))
	if err != nil {
		m = &mail.Message{Header: mail.Header{}, Body: bytes.NewReader(msg)}
	}
	h := m.Header
	if from := h["From"]; len(from) > 0 {
		if a := firstAddress(from[len(from)-1]); a != nil {
			o.Set("from", a)
		}
	}
	for _, k := range []string{"To", "Cc", "Bcc"} {
		list := []any{}
		for _, v := range h[k] {
			// Each line's first entry; a line with none is Mountebank's value[0], undefined,
			// which JSON writes as null in the list.
			if a := firstAddress(v); a != nil {
				list = append(list, a)
			} else {
				list = append(list, nil)
			}
		}
		o.Set(strings.ToLower(k), list)
	}
	if subj := h["Subject"]; len(subj) > 0 {
		if s := decodeHeader(subj[len(subj)-1]); s != "" { // mailparser leaves an empty one out
			o.Set("subject", s)
		}
	}
	o.Set("priority", "normal")
	var refs []any
	for _, v := range h["References"] {
		for _, id := range strings.Fields(decodeHeader(v)) {
			refs = append(refs, messageID(id))
		}
	}
	switch len(refs) {
	case 0:
		o.Set("references", []any{})
	case 1:
		o.Set("references", refs[0])
	default:
		o.Set("references", refs)
	}
	if irt := h["In-Reply-To"]; len(irt) > 0 && strings.TrimSpace(irt[len(irt)-1]) != "" {
		o.Set("inReplyTo", messageID(strings.TrimSpace(decodeHeader(irt[len(irt)-1]))))
	} else {
		o.Set("inReplyTo", []any{})
	}
	body, _ := io.ReadAll(m.Body)
	p := &mailParts{}
	p.walk(textproto.MIMEHeader(h), body, "", true, false, 0)
	o.Set("text", strings.TrimSpace(strings.Join(p.text, "\n")))
	o.Set("html", strings.TrimSpace(strings.Join(p.html, "<br/>\n")))
	o.Set("attachments", p.attachments)
	return o
}

// decodeHeader is how mailparser reads a header it decodes words in (subject, references,
// in-reply-to): its bytes read as UTF-8, trimmed, then its encoded words decoded (libmime's
// decodeWords).
func decodeHeader(v string) string {
	return decodeWords(strings.TrimFunc(jsvalue.DecodeUTF8(v), jsSpace))
}

// messageID wraps an id in angle brackets as mailparser's ensureMessageIDFormat does.
func messageID(id string) string {
	if !strings.HasPrefix(id, "<") {
		id = "<" + id
	}
	if !strings.HasSuffix(id, ">") {
		id += ">"
	}
	return id
}

// mailParts collects the text, html and attachments of a MIME tree as mailparser does.
type mailParts struct {
	text, html  []string
	attachments []any
}

// maxMIMEDepth bounds how deep multiparts are read. Each level reads the one below it in full:
// a message of 2 MB nested 30,000 deep took half a minute, and each level took stack. Real mail
// nests a few levels (mixed, alternative, related).
const maxMIMEDepth = 32

// walk visits one MIME node. partID is mailparser's part id ("" for the root); depth counts the
// multiparts above.
func (p *mailParts) walk(h textproto.MIMEHeader, body []byte, partID string, root, alternative bool, depth int) {
	ctype, params := parseHeaderValue(h.Get("Content-Type"))
	if ctype == "" {
		ctype = "text/plain"
	}
	if strings.HasPrefix(ctype, "multipart/") {
		boundary := params["boundary"]
		if boundary == "" || depth >= maxMIMEDepth {
			return
		}
		mr := multipart.NewReader(bytes.NewReader(body), boundary)
		alt := alternative || ctype == "multipart/alternative"
		for i := 1; ; i++ {
			part, err := mr.NextRawPart()
			if err != nil {
				return
			}
			child, err := io.ReadAll(part)
			if err != nil && len(child) == 0 {
				return
			}
			id := itoa(i)
			if partID != "" {
				id = partID + "." + id
			}
			p.walk(part.Header, child, id, false, alt, depth+1)
		}
	}
	disposition, dparams := parseHeaderValue(h.Get("Content-Disposition"))
	if disposition != "" && disposition != "attachment" && disposition != "inline" {
		disposition = "attachment"
	}
	isText := ctype == "text/plain" || ctype == "text/html"
	if disposition == "" {
		if isText {
			disposition = "inline"
		} else {
			disposition = "attachment"
		}
	}
	content := decodeTransfer(h.Get("Content-Transfer-Encoding"), body)
	if !isText || disposition != "inline" {
		a := config.NewObject("type", "attachment")
		a.Set("content", nodeBuffer(content))
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		if name != "" {
			name = decodeHeader(name)
		}
		if ctype == "application/octet-stream" && name != "" {
			a.Set("contentType", detectMimeType(name))
		} else {
			a.Set("contentType", ctype)
		}
		if partID == "" {
			a.Set("partId", nil)
		} else {
			a.Set("partId", partID)
		}
		a.Set("release", nil)
		if h.Get("Content-Disposition") != "" {
			a.Set("contentDisposition", disposition)
		}
		if name != "" {
			a.Set("filename", name)
		}
		if cid := h.Get("Content-Id"); cid != "" {
			a.Set("contentId", strings.TrimSpace(cid))
			a.Set("cid", strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cid), "<"), ">")))
		}
		a.Set("headers", &config.Object{})
		sum := md5.Sum(content)
		a.Set("checksum", hex.EncodeToString(sum[:]))
		a.Set("size", float64(len(content)))
		p.attachments = append(p.attachments, a)
		return
	}
	if cs := params["charset"]; cs != "" {
		if r := charsetReader(cs, bytes.NewReader(content)); r != nil {
			if b, err := io.ReadAll(r); err == nil {
				content = b
			}
		}
	}
	text := strings.ReplaceAll(jsvalue.DecodeUTF8(content), "\r\n", "\n")
	if ctype == "text/plain" {
		p.text = append(p.text, text)
	} else {
		p.html = append(p.html, text)
		if root {
			// An html-only message: mailparser gives its text as html-to-text makes it.
			if t, ok := htmlToText(text); ok {
				p.text = append(p.text, t)
			}
		}
	}
}

func itoa(i int) string {
	return jsvalue.FormatNumber(float64(i))
}

// nodeBuffer renders bytes as JSON.stringify renders a node Buffer.
func nodeBuffer(b []byte) *config.Object {
	data := make([]any, len(b))
	for i, c := range b {
		data[i] = float64(c)
	}
	return config.NewObject("type", "Buffer", "data", data)
}

func decodeTransfer(enc string, body []byte) []byte {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		clean := make([]byte, 0, len(body))
		for _, c := range body {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				clean = append(clean, c)
			}
		}
		return config.DecodeBase64(string(clean))
	case "quoted-printable":
		if b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body))); err == nil {
			return b
		}
	}
	return body
}

// charsetReader converts the charsets mail commonly uses to UTF-8; nil for UTF-8 and unknown ones.
func charsetReader(charset string, input io.Reader) io.Reader {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(charset, "-", ""), "_", "")) {
	case "iso88591", "latin1", "windows1252", "cp1252":
		b, err := io.ReadAll(input)
		if err != nil {
			return nil
		}
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return strings.NewReader(string(r))
	case "utf8", "usascii", "ascii":
		return input
	}
	return nil
}

// detectMimeType is libmime's detectMimeType, which mailparser applies to the filename of an
// application/octet-stream attachment: the text after the last dot (spaces removed, one
// leading dot dropped, lower case), application/octet-stream when the table has no such
// extension.
func detectMimeType(filename string) string {
	ext := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\uFEFF' {
			return -1
		}
		return r
	}, strings.ToLower(filename))
	ext = strings.TrimPrefix(ext, ".")
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i+1:]
	}
	if t, ok := mimeByExtension[ext]; ok {
		return t
	}
	return "application/octet-stream"
}
