package openapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/sandcall/sandcall/tools/upstream"
)

// DefaultTimeout bounds one call (the request and reading its answer)
// when Config.Timeout is zero: the same as an upstream MCP server's.
const DefaultTimeout = upstream.DefaultTimeout

// DefaultSpecTimeout bounds fetching a spec from a URL when
// Config.SpecTimeout is zero.
const DefaultSpecTimeout = 30 * time.Second

// MaxSpecBytes caps a spec, read from a file or a URL. GitHub's
// description, among the largest public ones, is 13 MB.
const MaxSpecBytes = 64 << 20

// MaxSecretBytes caps a secret file (Auth.File).
const MaxSecretBytes = 64 << 10

// Config is one OpenAPI source: an HTTP API whose operations become tools.
// Validate checks it once; Load calls Validate.
type Config struct {
	// Name names the source and prefixes its tools' names (Name + "_" +
	// operation). Required: a lower-case letter, then lower-case letters,
	// digits or "_", at most 24 characters.
	Name string
	// Spec is where the OpenAPI description is: a file path (relative to
	// Dir) or an http(s) URL. JSON or YAML; OpenAPI 3.0, 3.1 or Swagger
	// 2.0. Required. A URL is fetched without credentials.
	Spec string
	// BaseURL is the API's base URL (an absolute http(s) URL); an
	// operation's path is appended to its path. If empty, the spec's first
	// server (3.x, with its variables' defaults; a relative one resolved
	// against Spec's URL) or its schemes, host and basePath (2.0).
	// Credentials go only to this URL's origin.
	BaseURL string
	// Auth is how calls authenticate. If zero, they send no credentials.
	Auth Auth
	// Include keeps only the operations that match one of its patterns;
	// if empty, every operation is kept. Exclude then drops the
	// operations that match one of its patterns. A pattern is one of:
	//
	//	tag:issues                  an operation tagged "issues"
	//	/repos/*/*/issues           a path glob ("*" matches within a segment,
	//	                            a final "/**" any rest); the spec's path
	//	                            templates ({owner}) are matched as text
	//	POST /repos/**              a method and a path glob
	//	issues/*                    an operationId glob (path.Match syntax)
	Include, Exclude []string
	// Timeout bounds one call. If zero, DefaultTimeout. The broker's
	// per-call timeout applies as well.
	Timeout time.Duration
	// SpecTimeout bounds fetching Spec from a URL. If zero,
	// DefaultSpecTimeout.
	SpecTimeout time.Duration
	// MaxResponseBytes caps the body of one answer; a longer one fails
	// the call. If zero, upstream.MaxResponseBytes (16 MiB).
	MaxResponseBytes int64
	// Retries is how many more times an idempotent operation (GET, HEAD,
	// OPTIONS, PUT, DELETE, or one marked x-idempotent) is sent after a
	// transient failure (429, 502, 503, 504, or no connection), waiting as
	// the server's Retry-After says (at most MaxRetryWait) or a short
	// backoff. If zero, none here: sandcall's broker already retries the
	// transient failures of idempotent tools (bindings.Config.MaxRetries);
	// set it for callers outside the broker. Negative is an error.
	Retries int
	// Dir is the directory relative Spec and Auth.File paths are read
	// from. If empty, the process's working directory.
	Dir string
	// Transport sends the requests (for tests and proxies). If nil,
	// http.DefaultTransport.
	Transport http.RoundTripper
	// LookupEnv reads Auth.Env. If nil, os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Auth says how calls authenticate. The secret comes from the environment
// variable Env or from the file File (its whole content, trimmed: one
// line, at most MaxSecretBytes), exactly one of them. It is read once, by
// Load; it is sent only to the base URL's origin, and never appears in a
// tool's result, error, description or the package's logs.
type Auth struct {
	// Type is "bearer" (Authorization: Bearer <secret>), "basic"
	// (Authorization: Basic, the secret being "user:password", or the
	// password of Username), "api_key" (the secret in the header Header
	// or the query parameter Query, exactly one of them), or empty for
	// no credentials (then every other field must be empty).
	Type string
	// Env is the name of the environment variable holding the secret.
	Env string
	// File is the path of a file holding the secret.
	File string
	// Username is basic auth's user name; the secret is then the
	// password. If empty, the secret is "user:password".
	Username string
	// Header is the header an API key goes in (api_key only).
	Header string
	// Query is the query parameter an API key goes in (api_key only).
	Query string
}

// Auth types.
const (
	AuthBearer = "bearer"
	AuthBasic  = "basic"
	AuthAPIKey = "api_key"
)

// MaxRetryWait caps the wait before a retry, whatever Retry-After says.
const MaxRetryWait = 10 * time.Second

// Validate checks c without reading anything: names, URLs, patterns,
// auth fields, limits. Its error names the source and the field.
func (c *Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &Error{Source: c.Name, Err: fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))}
	}
	if !validSourceName(c.Name) {
		return &Error{Source: c.Name, Err: fmt.Errorf("name %q: want a lower-case letter, then lower-case letters, digits or _, at most %d characters", c.Name, maxSourceName)}
	}
	if strings.TrimSpace(c.Spec) == "" {
		return bad("spec", "missing: give a file path or an http(s) URL")
	}
	if isURL(c.Spec) {
		if _, err := parseHTTPURL(c.Spec); err != nil {
			return bad("spec", "%v", err)
		}
	}
	if c.BaseURL != "" {
		if _, err := parseHTTPURL(c.BaseURL); err != nil {
			return bad("base_url", "%v", err)
		}
	}
	if err := c.Auth.validate(); err != nil {
		return bad("auth", "%v", err)
	}
	for _, p := range c.Include {
		if _, err := parsePattern(p); err != nil {
			return bad("include", "%v", err)
		}
	}
	for _, p := range c.Exclude {
		if _, err := parsePattern(p); err != nil {
			return bad("exclude", "%v", err)
		}
	}
	switch {
	case c.Timeout < 0:
		return bad("timeout", "negative")
	case c.SpecTimeout < 0:
		return bad("spec_timeout", "negative")
	case c.MaxResponseBytes < 0:
		return bad("max_response_bytes", "negative")
	case c.Retries < 0:
		return bad("retries", "negative")
	}
	return nil
}

const maxSourceName = 24

func validSourceName(s string) bool {
	if s == "" || len(s) > maxSourceName || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (a *Auth) validate() error {
	switch a.Type {
	case "":
		if *a != (Auth{}) {
			return errors.New(`type is empty but other fields are set: set type to "bearer", "basic" or "api_key"`)
		}
		return nil
	case AuthBearer, AuthBasic, AuthAPIKey:
	default:
		return fmt.Errorf("type %q: want \"bearer\", \"basic\" or \"api_key\"", a.Type)
	}
	if (a.Env == "") == (a.File == "") {
		return errors.New("give exactly one of env (an environment variable's name) and file (a secret file's path)")
	}
	if a.Type != AuthBasic && a.Username != "" {
		return fmt.Errorf("username is for basic auth, not %s", a.Type)
	}
	if a.Type == AuthAPIKey {
		if (a.Header == "") == (a.Query == "") {
			return errors.New("api_key: give exactly one of header and query")
		}
		if a.Header != "" && !validHeaderName(a.Header) {
			return fmt.Errorf("header %q is not a valid header name", a.Header)
		}
	} else if a.Header != "" || a.Query != "" {
		return fmt.Errorf("header and query are for api_key, not %s", a.Type)
	}
	return nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// parseHTTPURL parses an absolute http(s) URL with a host and without
// user info (credentials belong in Auth, where they are kept out of
// messages).
func parseHTTPURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", stripURLError(err))
	}
	if _, ok := upstream.OriginOf(u); !ok {
		return nil, fmt.Errorf("%s: want an absolute http:// or https:// URL with a host", safeURL(u))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s: credentials in the URL: put them in auth", safeURL(u))
	}
	return u, nil
}

// safeURL is u without user info, query or fragment, for messages.
func safeURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment, c.ForceQuery = nil, "", "", false
	return c.String()
}

// stripURLError drops the URL a *url.Error quotes (it may carry a secret).
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// pattern is one Include or Exclude entry.
type pattern struct {
	tag    string // tag:NAME
	method string // upper case, with path
	path   string // a path glob
	id     string // an operationId glob
}

func parsePattern(p string) (pattern, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return pattern{}, errors.New("empty pattern")
	case strings.HasPrefix(p, "tag:"):
		t := strings.TrimSpace(p[4:])
		if t == "" {
			return pattern{}, fmt.Errorf("%q: empty tag", p)
		}
		return pattern{tag: t}, nil
	}
	method, rest, ok := strings.Cut(p, " ")
	if ok && strings.HasPrefix(strings.TrimSpace(rest), "/") {
		m := strings.ToUpper(method)
		if !httpMethod(m) {
			return pattern{}, fmt.Errorf("%q: %q is not an HTTP method", p, method)
		}
		pp := pattern{method: m, path: strings.TrimSpace(rest)}
		return pp, checkGlob(p, pp.path)
	}
	if strings.HasPrefix(p, "/") {
		return pattern{path: p}, checkGlob(p, p)
	}
	return pattern{id: p}, checkGlob(p, p)
}

func checkGlob(p, g string) error {
	if _, err := path.Match(strings.TrimSuffix(g, "/**"), ""); err != nil {
		return fmt.Errorf("%q: bad glob: %v", p, err)
	}
	return nil
}

func httpMethod(m string) bool {
	switch m {
	case "GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE":
		return true
	}
	return false
}

func (p pattern) match(op *operation) bool {
	switch {
	case p.tag != "":
		for _, t := range op.tags {
			if t == p.tag {
				return true
			}
		}
		return false
	case p.path != "":
		if p.method != "" && p.method != op.method {
			return false
		}
		return globPath(p.path, op.path)
	default:
		ok, _ := path.Match(p.id, op.id)
		return ok
	}
}

// globPath matches an operation's path against a glob whose "*" matches
// within one segment and whose final "/**" matches any rest (or none).
func globPath(glob, p string) bool {
	if prefix, ok := strings.CutSuffix(glob, "/**"); ok {
		if m, _ := path.Match(prefix, p); m {
			return true
		}
		segs := strings.Count(prefix, "/")
		parts := strings.SplitAfterN(p, "/", segs+2)
		if len(parts) < segs+2 {
			return false
		}
		head := strings.TrimSuffix(strings.Join(parts[:segs+1], ""), "/")
		m, _ := path.Match(prefix, head)
		return m
	}
	m, _ := path.Match(glob, p)
	return m
}

// selected reports whether op passes c's Include and Exclude.
func (c *Config) selected(op *operation) bool {
	if len(c.Include) > 0 {
		in := false
		for _, s := range c.Include {
			if p, err := parsePattern(s); err == nil && p.match(op) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, s := range c.Exclude {
		if p, err := parsePattern(s); err == nil && p.match(op) {
			return false
		}
	}
	return true
}
