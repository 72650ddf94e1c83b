// Package dashboard is the web front end at the admin port: the pages a browser gets when it
// asks for HTML at /, /imposters, /imposters/:port, /logs and /config, and their scripts and
// styles, embedded in the binary (no CDN, no build step). The pages hold no data: their script
// reads it from the admin API, so the API's checks (--apikey, --localOnly, --ipWhitelist) guard
// everything they show and every action they take.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"

	"github.com/valyala/fasthttp"
)

// RefreshHeader marks the API reads a page makes to refresh itself (the admin API logs them at
// debug rather than info).
const RefreshHeader = "X-Mockd-Dashboard"

// AssetPrefix is the path under which the dashboard's static files are served.
const AssetPrefix = "/dashboard/"

//go:embed assets
var assetFS embed.FS

// asset is one embedded file, ready to send.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Dashboard serves the pages and assets. It is immutable after New and safe for concurrent use.
type Dashboard struct {
	assets map[string]*asset // by path below AssetPrefix
	page   []byte
}

// Options configure the pages.
type Options struct {
	// KeyRequired tells the page that the admin API wants an x-api-key header, so it asks for
	// the key before its first request.
	KeyRequired bool
}

var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".txt": "text/plain; charset=utf-8",
}

// New loads the embedded assets.
func New(opts Options) *Dashboard {
	d := &Dashboard{assets: map[string]*asset{}}
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic("BUG: dashboard assets: " + err.Error())
	}
	var shell []byte
	err = fs.WalkDir(sub, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		body, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		if p == "index.html" {
			shell = body
			return nil
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		d.assets[p] = &asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil || shell == nil {
		panic("BUG: dashboard assets missing")
	}
	// Asset links carry their content hash, so a new mockd never runs an old cached script.
	for name, a := range d.assets {
		shell = bytes.ReplaceAll(shell, []byte(AssetPrefix+name+`"`), []byte(AssetPrefix+name+"?v="+strings.Trim(a.etag, `"`)+`"`))
	}
	key := "optional"
	if opts.KeyRequired {
		key = "required"
	}
	d.page = bytes.ReplaceAll(shell, []byte("{{apikey}}"), []byte(key))
	return d
}

// securityHeaders keep the pages to their own scripts and styles and out of frames.
func securityHeaders(h *fasthttp.ResponseHeader) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// Page answers with the dashboard page; its script renders what the path names.
func (d *Dashboard) Page(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	h := &ctx.Response.Header
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", "Accept")
	h.Set("Cache-Control", "no-store")
	securityHeaders(h)
	ctx.SetBody(d.page)
}

// Asset answers a GET or HEAD for a path below AssetPrefix: the file, 304 when the client has
// it, or 404.
func (d *Dashboard) Asset(ctx *fasthttp.RequestCtx, p string) {
	a, ok := d.assets[strings.TrimPrefix(p, AssetPrefix)]
	h := &ctx.Response.Header
	securityHeaders(h)
	if !ok {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		ctx.SetBodyString("not found\n")
		return
	}
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	if bytes.Equal(ctx.Request.Header.Peek("If-None-Match"), []byte(a.etag)) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	h.Set("Content-Type", a.contentType)
	ctx.SetBody(a.body)
}
