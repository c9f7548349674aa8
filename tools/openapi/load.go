package openapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/index"

	"github.com/sandcall/sandcall/tools"
)

// Error is why a source cannot be configured or loaded. It names the
// source, and where in the spec the problem is when that is known.
type Error struct {
	Source string
	// Pos is where in the spec: "file:line", or "file#/json/pointer", or
	// empty.
	Pos string
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("openapi source %q", e.Source)
	if e.Pos != "" {
		s += ": " + e.Pos
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Source is a loaded OpenAPI source: its tools and what lint found in
// its spec.
type Source struct {
	cfg      Config
	base     *url.URL
	origin   string
	version  string
	tools    []*tools.Tool
	findings []Finding
	skipped  int
	client   *client
	plans    map[*tools.Tool]*plan
}

// Name is the source's name.
func (s *Source) Name() string { return s.cfg.Name }

// Tools returns the source's tools, one per selected operation, in the
// spec's order. The caller may add them to a catalog; their schemas share
// subschemas and must not be modified.
func (s *Source) Tools() []*tools.Tool { return s.tools }

// Findings is what in the spec makes poor tools (package lint's
// openapi-* rules), each at the spec's file:line: operations without an
// operationId or a description, untyped request bodies, references not
// followed, patterns not checked.
func (s *Source) Findings() []Finding { return s.findings }

// BaseURL is the base URL calls go to.
func (s *Source) BaseURL() string { return safeURL(s.base) }

// Version is the spec's OpenAPI (or Swagger) version, as it says.
func (s *Source) Version() string { return s.version }

// Load reads cfg's spec and makes its operations into tools. It reads a
// spec URL within cfg.SpecTimeout and ctx; the secret is read here too.
// Every error is an *Error naming the source (and the place in the spec,
// when known). Load does no network I/O for a spec file.
func Load(ctx context.Context, cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fail := func(pos string, err error) (*Source, error) {
		return nil, &Error{Source: cfg.Name, Pos: pos, Err: err}
	}
	secret, err := cfg.Auth.secret(cfg.Dir, cfg.LookupEnv)
	if err != nil {
		return fail("", err)
	}
	data, specURL, err := readSpec(ctx, &cfg)
	if err != nil {
		return fail("", err)
	}
	s, err := build(&cfg, data, specURL)
	if err != nil {
		return nil, err
	}
	s.client = newClient(&cfg, s.base, secret)
	for _, t := range s.tools {
		t.Handler = s.client.handler(s.plans[t])
	}
	return s, nil
}

// Close releases the source's idle connections. Its tools fail no
// differently after it (a call opens a connection again).
func (s *Source) Close() {
	if s.client != nil {
		s.client.hc.CloseIdleConnections()
	}
}

// Pending is a source loading in the background (Start).
type Pending struct {
	name string
	done chan struct{}
	src  *Source
	err  error
}

// Start loads cfg in the background and returns at once, so that a spec
// behind a slow or unreachable URL never delays start-up: Wait or Done
// say when it is loaded. ctx bounds the load (as well as
// cfg.SpecTimeout); cancelling it abandons the load with its error.
func Start(ctx context.Context, cfg Config) *Pending {
	p := &Pending{name: cfg.Name, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.src, p.err = Load(ctx, cfg)
	}()
	return p
}

// Name is the source's name.
func (p *Pending) Name() string { return p.name }

// Done is closed when the load has finished, well or not.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the load (or ctx) and returns its outcome. Once the load
// has finished, Wait returns at once.
func (p *Pending) Wait(ctx context.Context) (*Source, error) {
	select {
	case <-p.done:
		return p.src, p.err
	case <-ctx.Done():
		return nil, &Error{Source: p.name, Err: fmt.Errorf("still loading: %w", ctx.Err())}
	}
}

// AddTo adds the source's tools to cat. A tool whose name cat already
// holds is left out, and its error returned among errs; the others are
// added.
func (s *Source) AddTo(cat *tools.Catalog) (added []string, errs []error) {
	for _, t := range s.tools {
		if err := cat.Add(t); err != nil {
			errs = append(errs, &Error{Source: s.cfg.Name, Pos: t.Pos, Err: err})
			continue
		}
		added = append(added, t.Name)
	}
	return added, errs
}

// readSpec reads the spec file (bounded: a regular file of at most
// MaxSpecBytes) or fetches the spec URL. It returns the URL the spec came
// from, if any, to resolve a relative server URL against.
func readSpec(ctx context.Context, cfg *Config) ([]byte, *url.URL, error) {
	if !isURL(cfg.Spec) {
		p := cfg.Spec
		if !filepath.IsAbs(p) && cfg.Dir != "" {
			p = filepath.Join(cfg.Dir, p)
		}
		data, err := readBounded(p, MaxSpecBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("spec %s: %w", cfg.Spec, err)
		}
		return data, nil, nil
	}
	u, _ := parseHTTPURL(cfg.Spec)
	timeout := cfg.SpecTimeout
	if timeout == 0 {
		timeout = DefaultSpecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("spec %s: %v", safeURL(u), stripURLError(err))
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", userAgent)
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	hc := &http.Client{Transport: tr, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		return nil
	}}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, nil, fmt.Errorf("spec %s: no answer within %v", safeURL(u), timeout)
		}
		return nil, nil, fmt.Errorf("spec %s: %v", safeURL(u), stripURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("spec %s: HTTP %s", safeURL(u), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxSpecBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("spec %s: reading: %v", safeURL(u), stripURLError(err))
	}
	if len(data) > MaxSpecBytes {
		return nil, nil, fmt.Errorf("spec %s: larger than %d MiB", safeURL(u), MaxSpecBytes>>20)
	}
	return data, resp.Request.URL, nil
}

// readBounded reads a regular file of at most max bytes: never a device,
// a FIFO or a directory, and never more than max+1 bytes of it.
func readBounded(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, cleanPathError(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, cleanPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, cleanPathError(err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// cleanPathError drops the path an *os.PathError repeats (the caller
// names the file as configured).
func cleanPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// secret reads the auth secret once: from the environment or a file.
func (a *Auth) secret(dir string, lookup func(string) (string, bool)) (string, error) {
	if a.Type == "" {
		return "", nil
	}
	var v string
	if a.Env != "" {
		if lookup == nil {
			lookup = os.LookupEnv
		}
		s, ok := lookup(a.Env)
		if !ok || strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("auth: environment variable %s is not set or empty", a.Env)
		}
		v = s
	} else {
		p := a.File
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		data, err := readBounded(p, MaxSecretBytes)
		if err != nil {
			return "", fmt.Errorf("auth: secret file %s: %w", a.File, err)
		}
		v = string(data)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errors.New("auth: the secret is empty")
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", errors.New("auth: the secret spans several lines")
	}
	if a.Type == AuthBasic && a.Username == "" && !strings.Contains(v, ":") {
		return "", errors.New(`auth: basic: the secret must be "user:password" (or set username)`)
	}
	return v, nil
}

// quietLogger keeps libopenapi's own logging out of sandcall's logs.
var quietLogger = sync.OnceValue(func() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) })

// build parses a spec and makes its tools (without handlers).
func build(cfg *Config, data []byte, specURL *url.URL) (*Source, error) {
	file := specName(cfg.Spec)
	fail := func(line int, err error) (*Source, error) {
		pos := ""
		if line > 0 {
			pos = file + ":" + strconv.Itoa(line)
		}
		return nil, &Error{Source: cfg.Name, Pos: pos, Err: err}
	}
	doc, err := libopenapi.NewDocumentWithConfiguration(data, &datamodel.DocumentConfiguration{
		Logger: quietLogger(),
		// A spec's $refs stay inside it: no file is read and no URL
		// fetched on its say-so.
		AllowFileReferences:       false,
		AllowRemoteReferences:     false,
		SkipExternalRefResolution: true,
		// The index's metadata (descriptions, enums, ...) is not used:
		// skipping it saves about 10% of the allocations on GitHub's
		// description. The circular-reference check stays on: without it
		// a loop of plain $refs overflows libopenapi's stack (a fatal
		// error, not a panic); the loops it finds are not errors here
		// (fatal, below).
		SkipMetadataCollection: true,
	})
	if err != nil {
		line, msg := yamlErrorLine(err)
		return fail(line, fmt.Errorf("not a readable OpenAPI description: %s", msg))
	}
	info := doc.GetSpecInfo()
	src := &Source{cfg: *cfg, version: info.Version}
	var (
		ops    []*operation
		server string
		legacy bool
	)
	switch info.SpecType {
	case "openapi":
		if !strings.HasPrefix(info.Version, "3.") {
			return fail(0, fmt.Errorf("OpenAPI %s is not supported: want 3.0, 3.1 or Swagger 2.0", info.Version))
		}
		m, err := doc.BuildV3Model()
		if m == nil || fatal(err) {
			return fail(modelError(err, file))
		}
		ops = operations3(&m.Model)
		server = baseURL3(&m.Model)
		legacy = strings.HasPrefix(info.Version, "3.0")
	case "swagger":
		m, err := doc.BuildV2Model()
		if m == nil || fatal(err) {
			return fail(modelError(err, file))
		}
		ops = operations2(&m.Model)
		server = baseURL2(&m.Model)
		legacy = true
	default:
		return fail(0, errors.New("not an OpenAPI 3.x or Swagger 2.0 description"))
	}
	root := info.RootNode
	if line, err := checkStructure(root); err != nil {
		return fail(line, err)
	}
	for _, op := range ops {
		if op.line == 0 {
			op.line = opLine(root, op.path, op.method)
		}
	}
	base, err := resolveBase(cfg.BaseURL, server, specURL)
	if err != nil {
		return fail(0, err)
	}
	src.base = base
	conv := newConverter(root, legacy)
	b := newBuilder(cfg, conv, file)
	for _, op := range ops {
		if !cfg.selected(op) {
			src.skipped++
			continue
		}
		t, err := b.tool(op)
		if err != nil {
			return fail(op.line, fmt.Errorf("%s %s: %w", op.method, op.path, err))
		}
		src.tools = append(src.tools, t)
	}
	src.findings = b.findings(conv)
	src.plans = b.plans
	return src, nil
}

// specName is the spec as messages name it: the path as configured, or
// the URL without query or fragment.
func specName(spec string) string {
	if isURL(spec) {
		if u, err := url.Parse(spec); err == nil {
			return safeURL(u)
		}
	}
	return spec
}

// yamlErrorLine pulls "line N" out of a parse error.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "unable to parse specification: ")
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(msg[:i]+rest[j:], "yaml: "), ":"))
			return n, msg
		}
	}
	if msg == "spec type not supported by libopenapi, sorry" {
		msg = "it has no \"openapi: 3.x\" or \"swagger: 2.0\" field"
	}
	return 0, msg
}

// modelErrors are the errors libopenapi's model reports, one by one.
func modelErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// circular reports whether err is libopenapi's report of a circular
// reference: recursive schemas are converted as $defs that refer to each
// other, and a loop of plain $refs accepts anything (schema.go).
func circular(err error) bool {
	var re *index.ResolvingError
	return errors.As(err, &re) && re.CircularReference != nil
}

// fatal reports whether the model's errors include one that is not a
// circular reference.
func fatal(err error) bool {
	for _, e := range modelErrors(err) {
		if !circular(e) {
			return true
		}
	}
	return false
}

// modelError reports the first of the model's errors that is not a
// circular reference, with its line.
func modelError(err error, file string) (int, error) {
	var errs []error
	for _, e := range modelErrors(err) {
		if !circular(e) {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return 0, errors.New("the description could not be read")
	}
	first := errs[0]
	line := 0
	var ie *index.IndexingError
	var re *index.ResolvingError
	switch {
	case errors.As(first, &ie) && ie.Node != nil:
		line = ie.Node.Line
	case errors.As(first, &re) && re.Node != nil:
		line = re.Node.Line
	}
	msg := first.Error()
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(errs)-1)
	}
	return line, errors.New(msg)
}

// checkStructure catches what libopenapi's model passes over silently:
// paths that are not a mapping, an operation that is not one.
func checkStructure(root *yaml.Node) (int, error) {
	for root != nil && root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	paths := childNode(root, "paths")
	if paths == nil {
		return 0, nil
	}
	if paths.Kind != yaml.MappingNode {
		return paths.Line, errors.New("paths: want a mapping of paths to path items")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		k, item := paths.Content[i], deref(paths.Content[i+1])
		if !strings.HasPrefix(k.Value, "/") && !strings.HasPrefix(k.Value, "x-") {
			return k.Line, fmt.Errorf("paths: %q does not start with /", clip(k.Value, 80))
		}
		if item == nil || item.Kind != yaml.MappingNode {
			if strings.HasPrefix(k.Value, "x-") {
				continue
			}
			return k.Line, fmt.Errorf("paths: %s: want a mapping of methods to operations", clip(k.Value, 80))
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			m := strings.ToUpper(item.Content[j].Value)
			if httpMethod(m) {
				if op := deref(item.Content[j+1]); op == nil || op.Kind != yaml.MappingNode {
					return item.Content[j].Line, fmt.Errorf("%s %s: want an operation (a mapping)", m, clip(k.Value, 80))
				}
			}
		}
	}
	return 0, nil
}

func childNode(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// opLine is the line of an operation's method key.
func opLine(root *yaml.Node, path, method string) int {
	for root != nil && root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	item := childNode(childNode(root, "paths"), path)
	if item == nil {
		return 0
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if strings.EqualFold(item.Content[i].Value, method) {
			return item.Content[i].Line
		}
	}
	return item.Line
}

// resolveBase picks the base URL: the configured one, else the spec's
// (a relative one resolved against the spec's URL).
func resolveBase(configured, server string, specURL *url.URL) (*url.URL, error) {
	if configured != "" {
		return parseHTTPURL(configured)
	}
	if server == "" {
		return nil, errors.New("the spec names no server: set base_url")
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("the spec's server URL: %v: set base_url", stripURLError(err))
	}
	if !u.IsAbs() {
		if specURL == nil {
			return nil, fmt.Errorf("the spec's server URL %q is relative and the spec is a file: set base_url", clip(server, 100))
		}
		u = specURL.ResolveReference(u)
	}
	return parseHTTPURL(u.String())
}

const userAgent = "sandcall-openapi"
