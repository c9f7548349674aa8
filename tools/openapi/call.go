package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream"
)

// maxExcerptBytes caps the excerpt of an error answer's body in a tool
// error.
const maxExcerptBytes = 300

// minScrubBytes is the shortest secret scrubbed from answers: a shorter
// one would match ordinary text (a number, a word) and corrupt the data.
// Error text is scrubbed of any secret.
const minScrubBytes = 8

// client makes the calls of one source.
type client struct {
	source   string
	base     *url.URL
	origin   string
	hc       *http.Client
	timeout  time.Duration
	maxBytes int64
	retries  int
	scrub    *strings.Replacer // the secret, in every form it is sent, → [REDACTED]
	secrets  [][]byte
}

func newClient(cfg *Config, base *url.URL, secret string) *client {
	origin, _ := upstream.OriginOf(base)
	c := &client{source: cfg.Name, base: base, origin: origin, timeout: cfg.Timeout, maxBytes: cfg.MaxResponseBytes, retries: cfg.Retries}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBytes == 0 {
		c.maxBytes = upstream.MaxResponseBytes
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	at := &authTransport{base: tr, origin: origin}
	if secret != "" {
		forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret)}
		switch cfg.Auth.Type {
		case AuthBearer:
			at.header, at.value = "Authorization", "Bearer "+secret
		case AuthBasic:
			cred := secret
			if cfg.Auth.Username != "" {
				cred = cfg.Auth.Username + ":" + secret
			}
			enc := base64.StdEncoding.EncodeToString([]byte(cred))
			at.header, at.value = "Authorization", "Basic "+enc
			forms = append(forms, enc)
		case AuthAPIKey:
			if cfg.Auth.Header != "" {
				at.header, at.value = cfg.Auth.Header, secret
			} else {
				at.query, at.value = cfg.Auth.Query, secret
			}
		}
		var pairs []string
		seen := map[string]bool{}
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				pairs = append(pairs, f, tools.Redacted)
				if len(f) >= minScrubBytes {
					c.secrets = append(c.secrets, []byte(f))
				}
			}
		}
		c.scrub = strings.NewReplacer(pairs...)
	}
	c.hc = &http.Client{Transport: at, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if o, _ := upstream.OriginOf(req.URL); o != origin {
			return &redirectError{to: o}
		}
		return nil
	}}
	return c
}

// redirectError refuses a redirect to another origin.
type redirectError struct{ to string }

func (e *redirectError) Error() string {
	return "redirected to another origin (" + e.to + "): refused, credentials never leave the base URL's origin"
}

// authTransport adds the credentials to requests to the base URL's
// origin, and refuses every other request: the check is on each request
// actually sent, below the client's redirect handling.
type authTransport struct {
	base          http.RoundTripper
	origin        string
	header, value string
	query         string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if o, _ := upstream.OriginOf(req.URL); o != t.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s", upstream.ErrOtherOrigin, o)
	}
	if t.value != "" {
		req = req.Clone(req.Context())
		if t.query != "" {
			q := req.URL.Query()
			q.Set(t.query, t.value)
			req.URL.RawQuery = q.Encode()
		} else {
			req.Header.Set(t.header, t.value)
		}
	}
	return t.base.RoundTrip(req)
}

// redact removes the secret, in every form it is sent in, from s.
func (c *client) redact(s string) string {
	if c.scrub != nil {
		s = c.scrub.Replace(s)
	}
	return tools.Redact(s)
}

// handler is the Handler of the tool planned by p.
func (c *client) handler(p *plan) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var in map[string]json.RawMessage
		if len(bytes.TrimSpace(args)) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, tools.ArgError("", "the arguments are not a JSON object", "Pass the arguments as one JSON object.")
			}
		}
		req, err := c.request(p, in)
		if err != nil {
			return nil, err
		}
		return c.do(ctx, p, req)
	}
}

// built is a request ready to send (again, on a retry).
type built struct {
	url         string
	header      http.Header
	body        []byte
	contentType string
}

func (c *client) request(p *plan, in map[string]json.RawMessage) (*built, error) {
	query := url.Values{}
	header := http.Header{}
	pathVals := map[string]string{}
	var cookies []string
	for _, q := range p.params {
		raw, ok := in[q.prop]
		if !ok || string(raw) == "null" {
			continue
		}
		switch q.in {
		case inPath:
			v, err := pathValue(q, raw)
			if err != nil {
				return nil, err
			}
			pathVals[q.name] = v
		case inQuery:
			addQuery(query, q, raw)
		case inHeader:
			header.Set(q.name, headerValue(q, raw))
		case inCookie:
			cookies = append(cookies, q.name+"="+url.QueryEscape(scalar(raw)))
		}
	}
	path, missing := fillPath(p.path, pathVals)
	if missing != "" {
		// The spec forgot to declare a path parameter.
		return nil, tools.Failed(fmt.Sprintf("%s %s: the path's parameter {%s} is not declared in the spec", p.method, p.path, clip(missing, 60)),
			"This operation cannot be called through this tool; report it to the operator.")
	}
	target := c.base.Scheme + "://" + c.base.Host + strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	q := c.base.Query()
	for k, vs := range query {
		q[k] = append(q[k], vs...)
	}
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	if len(cookies) > 0 {
		header.Set("Cookie", strings.Join(cookies, "; "))
	}
	b := &built{url: target, header: header}
	if p.result != nil && p.result.mediaType != "" {
		header.Set("Accept", p.result.mediaType)
	} else {
		header.Set("Accept", "application/json, */*;q=0.5")
	}
	header.Set("User-Agent", userAgent)
	if raw, ok := in[BodyProperty]; ok && p.bodyProp && p.body != nil {
		if err := c.encodeBody(b, p.body, raw); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// fillPath fills a path template with escaped values, escaping its
// literal parts; missing is a parameter of the template without a value.
func fillPath(tmpl string, vals map[string]string) (path, missing string) {
	var b strings.Builder
	lit := func(s string) { b.WriteString((&url.URL{Path: s}).EscapedPath()) }
	for tmpl != "" {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl[max(i, 0):], '}')
		if i < 0 || j < 0 {
			lit(tmpl)
			break
		}
		lit(tmpl[:i])
		name := tmpl[i+1 : i+j]
		v, ok := vals[name]
		if !ok {
			return "", name
		}
		b.WriteString(v)
		tmpl = tmpl[i+j+1:]
	}
	return b.String(), ""
}

// pathValue is a path parameter's value, escaped; "." and ".." and empty
// values are refused (they would change the path, not fill it).
func pathValue(q *param, raw json.RawMessage) (string, error) {
	var parts []string
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		for _, e := range arr {
			parts = append(parts, url.PathEscape(scalar(e)))
		}
	} else {
		parts = []string{url.PathEscape(scalar(raw))}
	}
	v := strings.Join(parts, ",")
	if v == "" || v == "." || v == ".." {
		return "", tools.ArgError("/"+escapeToken(q.prop), fmt.Sprintf("path parameter %q may not be %q", q.name, v),
			"Pass the identifier the path needs.")
	}
	return v, nil
}

// scalar is a JSON value as a parameter's text: a string as is, a number
// or boolean as written, anything else as JSON text.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// addQuery adds a query parameter by its style (form, explode by
// default; spaceDelimited, pipeDelimited, deepObject).
func addQuery(q url.Values, p *param, raw json.RawMessage) {
	if p.asJSON {
		q.Add(p.name, string(raw))
		return
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		vals := make([]string, len(arr))
		for i, e := range arr {
			vals[i] = scalar(e)
		}
		switch {
		case p.style == "spaceDelimited":
			q.Add(p.name, strings.Join(vals, " "))
		case p.style == "pipeDelimited":
			q.Add(p.name, strings.Join(vals, "|"))
		case p.style == "tabDelimited":
			q.Add(p.name, strings.Join(vals, "\t"))
		case p.explode:
			for _, v := range vals {
				q.Add(p.name, v)
			}
		default:
			q.Add(p.name, strings.Join(vals, ","))
		}
		return
	}
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		keys := sortedKeys(obj)
		switch {
		case p.style == "deepObject":
			for _, k := range keys {
				q.Add(p.name+"["+k+"]", scalar(obj[k]))
			}
		case p.explode:
			for _, k := range keys {
				q.Add(k, scalar(obj[k]))
			}
		default:
			var parts []string
			for _, k := range keys {
				parts = append(parts, k, scalar(obj[k]))
			}
			q.Add(p.name, strings.Join(parts, ","))
		}
		return
	}
	q.Add(p.name, scalar(raw))
}

// headerValue is a header parameter's value (simple style).
func headerValue(p *param, raw json.RawMessage) string {
	var arr []json.RawMessage
	if !p.asJSON && json.Unmarshal(raw, &arr) == nil {
		vals := make([]string, len(arr))
		for i, e := range arr {
			vals[i] = scalar(e)
		}
		return sanitizeHeader(strings.Join(vals, ","))
	}
	if p.asJSON {
		return sanitizeHeader(string(raw))
	}
	return sanitizeHeader(scalar(raw))
}

func sanitizeHeader(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return ' '
		}
		return r
	}, s)
}

// sortedKeys are the keys of m in order (a query and a form are encoded
// sorted anyway).
func sortedKeys(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }

// encodeBody encodes the body argument by the body's media type.
func (c *client) encodeBody(b *built, bd *body, raw json.RawMessage) error {
	mt := bd.mediaType
	switch {
	case isJSON(mt) || mt == "":
		if mt == "" {
			mt = "application/json"
		}
		b.body, b.contentType = raw, mt
	case mediaBase(mt) == formURLEncoded:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return tools.ArgError("/body", "the body must be an object of form fields", "Pass body as an object.")
		}
		v := url.Values{}
		for _, k := range sortedKeys(obj) {
			addQuery(v, &param{name: k, style: "form", explode: true}, obj[k])
		}
		b.body, b.contentType = []byte(v.Encode()), formURLEncoded
	case mediaBase(mt) == multipartForm:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return tools.ArgError("/body", "the body must be an object of form fields", "Pass body as an object.")
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, k := range sortedKeys(obj) {
			var arr []json.RawMessage
			if json.Unmarshal(obj[k], &arr) == nil {
				for _, e := range arr {
					mw.WriteField(k, scalar(e))
				}
				continue
			}
			mw.WriteField(k, scalar(obj[k]))
		}
		mw.Close()
		b.body, b.contentType = buf.Bytes(), mw.FormDataContentType()
	default:
		if strings.Contains(mt, "*") {
			mt = "application/octet-stream"
		}
		b.body, b.contentType = []byte(scalar(raw)), mt
	}
	return nil
}

// do sends the request, again after a transient failure when the
// operation is idempotent and the source allows retries.
func (c *client) do(ctx context.Context, p *plan, b *built) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		res, wait, err := c.once(ctx, p, b)
		if err == nil {
			return res, nil
		}
		var se *sandbox.Error
		if attempt >= c.retries || !p.idempotent || !errors.As(err, &se) || !se.Retryable {
			return nil, err
		}
		if wait <= 0 {
			wait = 100 * time.Millisecond << (2 * attempt)
			wait = wait/2 + rand.N(wait/2+1)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, c.ctxError(ctx, p)
		case <-t.C:
		}
	}
}

func (c *client) ctxError(ctx context.Context, p *plan) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &sandbox.Error{Code: sandbox.ECancelled, Message: "the call was cancelled", Tool: p.tool}
	}
	return tools.Transient(fmt.Sprintf("%s %s: the call ran out of time", p.method, p.path), "")
}

// once sends the request one time. wait is what the server asked to wait
// before trying again (Retry-After), if anything.
func (c *client) once(ctx context.Context, p *plan, b *built) (res json.RawMessage, wait time.Duration, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if b.body != nil {
		body = bytes.NewReader(b.body)
	}
	req, rerr := http.NewRequestWithContext(cctx, p.method, b.url, body)
	if rerr != nil {
		return nil, 0, tools.Failed(fmt.Sprintf("%s %s: cannot build the request: %s", p.method, p.path, c.redact(stripURLError(rerr).Error())), "")
	}
	for k, v := range b.header {
		req.Header[k] = v
	}
	if b.contentType != "" {
		req.Header.Set("Content-Type", b.contentType)
	}
	start := time.Now()
	resp, derr := c.hc.Do(req)
	if derr != nil {
		slog.Debug("openapi call failed", "source", c.source, "tool", p.tool, "method", p.method, "path", p.path,
			"duration", time.Since(start))
		return nil, 0, c.transportError(ctx, cctx, p, derr)
	}
	defer resp.Body.Close()
	data, rerr2 := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	slog.Debug("openapi call", "source", c.source, "tool", p.tool, "method", p.method, "path", p.path,
		"status", resp.StatusCode, "bytes", len(data), "duration", time.Since(start))
	if rerr2 != nil {
		return nil, 0, c.transportError(ctx, cctx, p, rerr2)
	}
	if int64(len(data)) > c.maxBytes {
		return nil, 0, tools.Failed(fmt.Sprintf("%s %s: the answer is larger than %d bytes", p.method, p.path, c.maxBytes),
			"Ask for less: a filter, a smaller page (per_page, limit), or fewer fields.")
	}
	data = c.scrubBytes(data)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		res, err := c.result(p, resp, data)
		return res, 0, err
	}
	e, wait := c.statusError(p, resp, data)
	return nil, wait, e
}

// scrubBytes removes the secret from an answer (an API that echoes the
// request, say): it never reaches a program.
func (c *client) scrubBytes(data []byte) []byte {
	for _, s := range c.secrets {
		if bytes.Contains(data, s) {
			data = bytes.ReplaceAll(data, s, []byte(tools.Redacted))
		}
	}
	return data
}

// transportError reports a failure to get an answer.
func (c *client) transportError(ctx, cctx context.Context, p *plan, err error) error {
	if ctx.Err() != nil {
		return c.ctxError(ctx, p)
	}
	var re *redirectError
	if errors.As(err, &re) {
		return tools.Failed(fmt.Sprintf("%s %s: the API %s", p.method, p.path, re.Error()), "The operation cannot be called through this source; report it to the operator.")
	}
	if errors.Is(err, upstream.ErrOtherOrigin) {
		return tools.Failed(fmt.Sprintf("%s %s: refused: a request to an origin other than the base URL's", p.method, p.path), "")
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		msg := fmt.Sprintf("%s %s: no answer within %v", p.method, p.path, c.timeout)
		if p.idempotent {
			return tools.Transient(msg, "The API may be slow or down: try again later.")
		}
		return tools.Failed(msg, "The request may or may not have taken effect: check (with a read operation) before sending it again.")
	}
	cause := c.redact(stripURLError(err).Error())
	msg := fmt.Sprintf("%s %s: cannot reach %s: %s", p.method, p.path, c.origin, upstream.CleanText(cause, 200))
	var oe *net.OpError
	if p.idempotent || errors.As(err, &oe) && oe.Op == "dial" {
		return tools.Transient(msg, "The API may be down: try again later.")
	}
	return tools.Failed(msg, "The request may or may not have taken effect: check (with a read operation) before sending it again.")
}

// statusError reports an answer outside 2xx: E_TOOL_FAILED with the
// status and an excerpt of the body; 429, 502, 503 and 504 are transient
// (with the server's Retry-After), 404 and 410 unavailable.
func (c *client) statusError(p *plan, resp *http.Response, data []byte) (*sandbox.Error, time.Duration) {
	msg := fmt.Sprintf("%s %s: HTTP %s", p.method, p.path, statusText(resp))
	if ex := c.excerpt(resp.Header.Get("Content-Type"), data); ex != "" {
		msg += ": " + ex
	}
	var e *sandbox.Error
	var wait time.Duration
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable ||
		code == http.StatusBadGateway || code == http.StatusGatewayTimeout:
		wait = retryAfter(resp.Header.Get("Retry-After"))
		hint := "The API is busy or rate-limited: try again later."
		if wait > 0 {
			hint = fmt.Sprintf("The API asks to wait %v before trying again.", wait.Round(time.Second))
		}
		e = tools.Transient(msg, hint)
		if wait > MaxRetryWait {
			wait = MaxRetryWait
		}
	case code == http.StatusUnauthorized:
		e = tools.Failed(msg, fmt.Sprintf("The API refused the credentials of source %q: the operator must check its auth. Retrying will not help.", c.source))
	case code == http.StatusForbidden:
		e = tools.Failed(msg, "Not permitted with the configured credentials (or a rate limit): do not retry the same call.")
	case code == http.StatusNotFound || code == http.StatusGone:
		e = tools.Unavailable(msg, "No such resource: check the identifiers in the arguments; do not guess.")
	case code >= 400 && code < 500:
		e = tools.Failed(msg, "The API rejected the arguments: fix them as the message says, then call again.")
	default:
		e = tools.Failed(msg, "The API failed; report it rather than retrying.")
	}
	e.Tool = p.tool
	return e, wait
}

func statusText(resp *http.Response) string {
	if t := http.StatusText(resp.StatusCode); t != "" {
		return strconv.Itoa(resp.StatusCode) + " " + t
	}
	return strconv.Itoa(resp.StatusCode)
}

// excerpt is a short, secret-free excerpt of an error answer: a JSON
// answer's "message" (or "error", "detail", "title") when it has one, else
// the start of its text.
func (c *client) excerpt(ct string, data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ""
	}
	text := ""
	if json.Valid(data) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) == nil {
			for _, k := range []string{"message", "error_description", "error", "detail", "title"} {
				if s, ok := obj[k].(string); ok && s != "" {
					text = s
					break
				}
			}
		}
		if text == "" {
			text = string(data)
		}
	} else if isText(ct) || ct == "" || utf8.Valid(data) {
		text = string(data)
	} else {
		return fmt.Sprintf("(%d bytes of %s)", len(data), clip(mediaBase(ct), 60))
	}
	text = strings.Join(strings.Fields(c.redact(text)), " ")
	return clip(upstream.CleanText(text, 4*maxExcerptBytes), maxExcerptBytes)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// result turns a 2xx answer into the call's result: JSON as a value, an
// empty body as null, text as {type: "text", mimeType, text}, binary
// content as such an object whose text says its size.
func (c *client) result(p *plan, resp *http.Response, data []byte) (json.RawMessage, error) {
	ct := resp.Header.Get("Content-Type")
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return json.RawMessage("null"), nil
	}
	looksJSON := isJSON(ct) || ct == "" && p.result != nil && isJSON(p.result.mediaType)
	if looksJSON && json.Valid(trimmed) {
		if !utf8.Valid(trimmed) {
			// Strings that are not UTF-8: decoded, they hold U+FFFD
			// instead, as JSON.parse would.
			var v any
			if json.Unmarshal(trimmed, &v) == nil {
				if b, err := json.Marshal(v); err == nil {
					return b, nil
				}
			}
		}
		var out bytes.Buffer
		if json.Compact(&out, trimmed) == nil {
			return out.Bytes(), nil
		}
	}
	content := upstream.Content{Type: "text", MIMEType: mediaBase(ct)}
	if (isText(ct) || looksJSON || ct == "") && utf8.Valid(data) {
		content.Text = string(data)
	} else {
		content.Text = fmt.Sprintf("(binary content: %d bytes of %s, not shown)", len(data), orUnknown(content.MIMEType))
	}
	out, err := json.Marshal(content)
	if err != nil {
		return nil, tools.Failed(fmt.Sprintf("%s %s: the answer cannot be encoded", p.method, p.path), "")
	}
	return out, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
