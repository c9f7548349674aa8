package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sandcall/sandcall/tools/openapi"
	"github.com/sandcall/sandcall/tools/search"
)

// File is sandcall.yaml: every key, its type and its zero value's meaning.
// Unknown keys are errors. Relative paths are relative to the file's
// directory (Load resolves them). Flags override every value.
//
// The tag project:"trust" marks a key that runs code, sends data elsewhere,
// passes secrets or grants authority: a project's own sandcall.yaml sets it
// only once a person trusted it (`sandcall servers trust`); until then it
// is ignored with a warning. project:"free" marks a key a project may set
// as it likes. TestEveryKeyClassified fails on a key without one: a new
// source of tools (an openapi: section, say) must say which it is.
type File struct {
	Version int `yaml:"version" project:"free"`
	// Policy is the policy file (--policy). A project's policy decides
	// which of the tools in the catalog programs may call; it adds no
	// tool, runs nothing and sends nothing.
	Policy string `yaml:"policy" project:"free"`
	// Audit is where audit records go: a file, or "-" for stderr
	// (--audit). A file of the project's choosing, with every call's
	// arguments: needs trust.
	Audit string `yaml:"audit" project:"trust"`
	// Principal is who stdio sessions and `sandcall run` act for, and HTTP
	// clients when no tokens are configured. If absent, "local", no roles.
	// Roles grant what the policy gives them: needs trust.
	Principal *Principal `yaml:"principal" project:"trust"`
	// Auth says who may connect over HTTP: needs trust (a token of the
	// project's choosing is a way in).
	Auth Auth `yaml:"auth" project:"trust"`
	// Limits are the operator's ceilings; a request may only lower them.
	Limits Limits `yaml:"limits" project:"free"`
	// Workers is the size of the worker pool (--workers). How many
	// processes the machine runs is the operator's: a project's
	// `workers: 100000` would be a fork bomb; needs trust.
	Workers int `yaml:"workers" project:"trust"`
	// Pool is the process tier's capacity: the operator's, as workers;
	// needs trust.
	Pool Pool `yaml:"pool" project:"trust"`
	// ListThreshold is how many tools run_code's description lists and
	// serve exposes as MCP tools before it names families and points to
	// search_tools instead (mcpserver.Config.ListThreshold). If absent, 30;
	// -1: no threshold.
	ListThreshold int `yaml:"list_threshold" project:"free"`
	// HTTP holds the limits of `serve --http`.
	HTTP HTTP `yaml:"http" project:"free"`
	// Store is where state shared by replicas lives: "memory:" (the
	// default, this process) or "redis://host:port[/db]". With Redis, every
	// replica naming it serves the same read_output refs, counts the same
	// rate-limit buckets and knows the same uploaded modules. Results,
	// pins and the approval sealing key go there: needs trust.
	Store string `yaml:"store" project:"trust"`
	// EnvPassthrough names variables of sandcall's environment passed on,
	// as they are, to local script tools and stdio upstream servers (a
	// token exported by the developer's shell or .envrc). Only these:
	// never the whole environment. --env adds more. Secrets: needs trust.
	EnvPassthrough []string `yaml:"env_passthrough" project:"trust"`
	// Tracing exports OpenTelemetry spans over OTLP/HTTP; off unless
	// switched on. Spans go to the endpoint: needs trust.
	Tracing Tracing `yaml:"tracing" project:"trust"`
	// OpenAPI are HTTP APIs whose operations become tools, from their
	// OpenAPI description (package tools/openapi). They call a host of
	// their own with credentials from the environment or a file: needs
	// trust.
	OpenAPI []OpenAPI `yaml:"openapi" project:"trust"`
	// Search configures search_tools (package tools/search): word files
	// added to its word knowledge, and an embeddings reranker, off unless
	// its url is set. The reranker sends queries and tool texts to its
	// endpoint, with a key from the environment: needs trust.
	Search Search `yaml:"search" project:"trust"`
	// Programs are programs as tools (tools/programs): a directory of
	// program files and saved programs. A project naming its own
	// directory of programs, or raising the bounds: needs trust.
	Programs Programs `yaml:"programs" project:"trust"`
	// State bounds what programs keep between runs: a project raising
	// them could fill the store: needs trust.
	State State `yaml:"state" project:"trust"`
}

// OpenAPI is one item of the openapi: list (openapi.Config).
type OpenAPI struct {
	// Name prefixes the source's tools (name_operation): a lower-case
	// letter, then lower-case letters, digits or _, at most 24.
	Name string `yaml:"name"`
	// Spec is the OpenAPI description: a file (relative to this file's
	// directory) or an http(s) URL; JSON or YAML, 3.0, 3.1 or 2.0.
	Spec string `yaml:"spec"`
	// BaseURL is the API's base URL; if empty, the spec's first server.
	BaseURL string `yaml:"base_url"`
	// Auth is how calls authenticate; none if absent.
	Auth OpenAPIAuth `yaml:"auth"`
	// Include keeps only the operations a pattern matches (tag:NAME, a
	// path glob, "METHOD /path/**", an operationId glob); all if empty.
	Include []string `yaml:"include"`
	// Exclude then drops the operations a pattern matches.
	Exclude []string `yaml:"exclude"`
	// Timeout bounds one call; if absent, 60s.
	Timeout string `yaml:"timeout"`
	// SpecTimeout bounds fetching a spec from a URL; if absent, 30s.
	SpecTimeout string `yaml:"spec_timeout"`
	// MaxResponseBytes caps one answer's body; if absent, 16 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
}

// OpenAPIAuth is openapi[].auth (openapi.Auth): the secret comes from the
// variable env or the file file, exactly one of them.
type OpenAPIAuth struct {
	// Type is bearer, basic or api_key.
	Type string `yaml:"type"`
	// Env names the environment variable holding the secret.
	Env string `yaml:"env"`
	// File is a file holding the secret (relative to this file's
	// directory).
	File string `yaml:"file"`
	// Username is basic auth's user; the secret is then the password.
	Username string `yaml:"username"`
	// Header is the header an API key goes in (api_key).
	Header string `yaml:"header"`
	// Query is the query parameter an API key goes in (api_key).
	Query string `yaml:"query"`
}

// TimeoutDuration is openapi[].timeout, 0 when absent.
func (o OpenAPI) TimeoutDuration() time.Duration {
	d, _ := duration("", o.Timeout, "")
	return d
}

// SpecTimeoutDuration is openapi[].spec_timeout, 0 when absent.
func (o OpenAPI) SpecTimeoutDuration() time.Duration {
	d, _ := duration("", o.SpecTimeout, "")
	return d
}

// Search is the search: section (search.Config).
type Search struct {
	// WordFiles are word files (relative to this file's directory) added
	// to the built-in word knowledge, in order (docs/search.md).
	WordFiles []string `yaml:"word_files"`
	// Embeddings reorders the best tools with an embeddings model.
	Embeddings Embeddings `yaml:"embeddings"`
}

// Embeddings is search.embeddings (search.EmbeddingsConfig): any
// OpenAI-compatible /v1/embeddings endpoint; off while url is empty.
type Embeddings struct {
	// URL is the API's base (http://localhost:11434/v1) or its
	// /embeddings endpoint.
	URL string `yaml:"url"`
	// Model is the embedding model asked for.
	Model string `yaml:"model"`
	// APIKeyEnv names the variable holding the API key (a bearer token);
	// none is sent if absent.
	APIKeyEnv string `yaml:"api_key_env"`
	// Timeout bounds one search's embedding request; past it the lexical
	// order stands. If absent, 2s.
	Timeout string `yaml:"timeout"`
	// Weight is the similarity's share of the order, from 0 to 1; if
	// absent, 0.5.
	Weight float64 `yaml:"weight"`
}

// TimeoutDuration is search.embeddings.timeout, 0 when absent.
func (e Embeddings) TimeoutDuration() time.Duration {
	d, _ := duration("", e.Timeout, "")
	return d
}

// Principal is the principal: section.
type Principal struct {
	ID    string   `yaml:"id"`
	Roles []string `yaml:"roles"`
}

// Token is one bearer token of auth.tokens.
type Token struct {
	// SHA256 is the hex SHA-256 of the token (`sandcall token hash`),
	// never the token itself.
	SHA256    string   `yaml:"sha256"`
	Principal string   `yaml:"principal"`
	Roles     []string `yaml:"roles"`
}

// Auth is the auth: section.
type Auth struct {
	// Tokens are the bearer tokens HTTP clients present.
	Tokens []Token `yaml:"tokens"`
	// JWT bearer tokens and the resource metadata, beside tokens.
	HostedAuth `yaml:",inline"`
}

// HostedAuth is the hosted-auth part of the auth: section:
//
//	auth:
//	  public_url: https://sandcall.example.com   # the URL clients reach; resource = + /mcp
//	  authorization_servers: [https://idp.example.com/]  # metadata; default [jwt.issuer]
//	  scopes_supported: [mcp]                    # metadata
//	  jwt:
//	    jwks_url: https://idp.example.com/.well-known/jwks.json
//	    issuer: https://idp.example.com/
//	    audience: [https://sandcall.example.com/mcp]  # default: public_url + /mcp, public_url
//	    principal_claim: sub                     # principal "jwt:<sub>"
//	    roles_claim: roles                       # optional
//	    required_scopes: [mcp]                   # optional; else 403 insufficient_scope
//	    leeway: 30s
//	    algorithms: [RS256, ES256, EdDSA]        # default: every RS*, PS*, ES* and EdDSA
//	    refresh_interval: 30s                    # least time between two JWKS fetches
//	    allow_http: false                        # plain-HTTP JWKS off loopback
type HostedAuth struct {
	PublicURL            string     `yaml:"public_url"`
	AuthorizationServers StringList `yaml:"authorization_servers"`
	ScopesSupported      StringList `yaml:"scopes_supported"`
	JWT                  *JWT       `yaml:"jwt"`
}

// JWT is auth.jwt.
type JWT struct {
	JWKSURL         string     `yaml:"jwks_url"`
	Issuer          string     `yaml:"issuer"`
	Audience        StringList `yaml:"audience"`
	PrincipalClaim  string     `yaml:"principal_claim"`
	RolesClaim      string     `yaml:"roles_claim"`
	RequiredScopes  StringList `yaml:"required_scopes"`
	Leeway          string     `yaml:"leeway"`
	Algorithms      StringList `yaml:"algorithms"`
	RefreshInterval string     `yaml:"refresh_interval"`
	AllowHTTP       bool       `yaml:"allow_http"`
}

// Check checks auth.jwt (the flags may complete it first); its errors name
// the keys.
func (j *JWT) Check() error {
	if j.JWKSURL == "" {
		return errors.New("auth.jwt.jwks_url (--auth-jwks-url) is required: where the token issuer publishes its public keys")
	}
	if j.Issuer == "" {
		return errors.New("auth.jwt.issuer (--auth-issuer) is required with a JWKS URL: the exact iss claim the tokens carry")
	}
	if _, err := duration("auth.jwt.leeway", j.Leeway, "30s"); err != nil {
		return err
	}
	_, err := duration("auth.jwt.refresh_interval", j.RefreshInterval, "30s")
	return err
}

// LeewayDuration is auth.jwt.leeway, 0 when absent.
func (j *JWT) LeewayDuration() time.Duration {
	d, _ := duration("", j.Leeway, "")
	return d
}

// RefreshIntervalDuration is auth.jwt.refresh_interval, 0 when absent.
func (j *JWT) RefreshIntervalDuration() time.Duration {
	d, _ := duration("", j.RefreshInterval, "")
	return d
}

// StringList is a list of strings in YAML that may also be written as one
// string (audience: https://sandcall.example.com/mcp).
type StringList []string

// UnmarshalYAML reads a string or a list of strings.
func (l *StringList) UnmarshalYAML(unmarshal func(any) error) error {
	var one string
	if err := unmarshal(&one); err == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := unmarshal(&many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*l = many
	return nil
}

// Limits is the limits: section.
type Limits struct {
	Timeout         string `yaml:"timeout"`
	MemoryMB        int    `yaml:"memory_mb"`
	MaxCalls        int    `yaml:"max_calls"`
	ApprovalTimeout string `yaml:"approval_timeout"`
	// MaxRequestStateBytes caps the sealed state of an approval asked
	// without a session (MCP 2026-07-28); if absent, 1 MiB
	// (mcpserver.Config.MaxRequestStateBytes).
	MaxRequestStateBytes int64 `yaml:"max_request_state_bytes"`
}

// TimeoutDuration is limits.timeout, 0 when absent.
func (l Limits) TimeoutDuration() time.Duration {
	d, _ := duration("", l.Timeout, "")
	return d
}

// ApprovalTimeoutDuration is limits.approval_timeout, 0 when absent.
func (l Limits) ApprovalTimeoutDuration() time.Duration {
	d, _ := duration("", l.ApprovalTimeout, "")
	return d
}

// Pool is the pool: section: the process tier's capacity and its sharing
// between principals. Zero values are the defaults of process.Config.
type Pool struct {
	// WorkerReuse is how many runs of one principal a worker serves (1: one
	// run per worker). Default 64.
	WorkerReuse int `yaml:"worker_reuse"`
	// MaxRunning is how many runs execute at once, all principals
	// together. Default 4 per CPU.
	MaxRunning int `yaml:"max_running"`
	// Queue is how many runs may wait for a slot. Default 128 or 16 per
	// CPU, whichever is larger.
	Queue int `yaml:"queue"`
	// QueueTimeout is how long a run may wait before E_BUSY. Default 30s.
	QueueTimeout string `yaml:"queue_timeout"`
	// MaxWorkerRSSMB is the resident memory past which a worker is not
	// reused. Default 192.
	MaxWorkerRSSMB int `yaml:"max_worker_rss_mb"`
}

// QueueTimeoutDuration is pool.queue_timeout, 0 when absent.
func (p Pool) QueueTimeoutDuration() time.Duration {
	d, _ := duration("", p.QueueTimeout, "")
	return d
}

func (p Pool) check() error {
	if p.WorkerReuse < 0 || p.MaxRunning < 0 || p.Queue < 0 || p.MaxWorkerRSSMB < 0 {
		return fmt.Errorf("pool: values must not be negative")
	}
	_, err := duration("pool.queue_timeout", p.QueueTimeout, "30s")
	return err
}

// Defaults of the HTTP transport's limits.
const (
	DefaultBodyTimeout    = 30 * time.Second
	DefaultMaxConnections = 256
	DefaultRatePerSecond  = 50
	DefaultRateBurst      = 200
)

// HTTP is the http: section: the limits of `serve --http`.
type HTTP struct {
	// BodyTimeout bounds the time to receive one request body (a body sent
	// at a byte a second is cut off with 408). If absent, 30s.
	BodyTimeout string `yaml:"body_timeout"`
	// MaxConnections caps open connections; one more is answered 503 and
	// closed. If absent, 256.
	MaxConnections int `yaml:"max_connections"`
	// RateLimit is the transport rate limit per principal: a token bucket
	// of Burst requests refilled at PerSecond; a request over it gets 429
	// with Retry-After. If absent, 50 a second, bursts of 200; PerSecond -1
	// turns it off. It applies only with authentication (tokens or JWTs):
	// without, every request is the one local user's, never throttled.
	RateLimit struct {
		PerSecond float64 `yaml:"per_second"`
		Burst     int     `yaml:"burst"`
	} `yaml:"rate_limit"`
}

// BodyTimeoutDuration is http.body_timeout, DefaultBodyTimeout when
// absent.
func (h HTTP) BodyTimeoutDuration() time.Duration {
	d, _ := duration("", h.BodyTimeout, "")
	if d == 0 {
		return DefaultBodyTimeout
	}
	return d
}

func (h HTTP) check() error {
	if _, err := duration("http.body_timeout", h.BodyTimeout, "30s"); err != nil {
		return err
	}
	if h.MaxConnections < 0 || h.RateLimit.Burst < 0 || (h.RateLimit.PerSecond < 0 && h.RateLimit.PerSecond != -1) {
		return errors.New("http: max_connections and rate_limit.burst must not be negative; rate_limit.per_second is positive, or -1 for no limit")
	}
	return nil
}

// withDefaults fills in the defaults of the zero values.
func (h *HTTP) withDefaults() {
	if h.MaxConnections == 0 {
		h.MaxConnections = DefaultMaxConnections
	}
	if h.RateLimit.PerSecond == 0 {
		h.RateLimit.PerSecond = DefaultRatePerSecond
	}
	if h.RateLimit.Burst == 0 {
		h.RateLimit.Burst = DefaultRateBurst
	}
}

// Tracing is the tracing: section. Tracing is off unless --otlp-endpoint,
// tracing.otlp_endpoint or tracing.enabled switches it on; the OTEL_*
// environment variables are read only then, never to switch it on (a
// variable left in a shell must not make a server send data anywhere).
type Tracing struct {
	// Enabled switches tracing on with the endpoint of the environment
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT) or
	// the default http://localhost:4318/v1/traces.
	Enabled bool `yaml:"enabled"`
	// OTLPEndpoint is the collector's OTLP/HTTP URL; setting it switches
	// tracing on. A URL without a path gets /v1/traces.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// Protocol must be http/protobuf (the default), the only one built in.
	Protocol string `yaml:"protocol"`
	// SampleRatio is the share of new traces recorded (0 to 1); a trace
	// the client started keeps its own decision (parent-based). If absent,
	// the SDK's default: OTEL_TRACES_SAMPLER, else every trace.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// Headers are sent with every export (an API key, say). They replace
	// OTEL_EXPORTER_OTLP_HEADERS when set.
	Headers map[string]string `yaml:"headers"`
}

// duration parses the duration of key; "" is 0. example is shown in the
// error.
func duration(key, v, example string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a duration such as %s, got %q", key, example, v)
	}
	return d, nil
}

// envNameOK reports whether name is an environment variable name.
func envNameOK(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	return strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// Config is the source's openapi.Config (Dir left empty: Load made its
// paths absolute).
func (o OpenAPI) Config() openapi.Config {
	return openapi.Config{Name: o.Name, Spec: o.Spec, BaseURL: o.BaseURL,
		Auth: openapi.Auth{Type: o.Auth.Type, Env: o.Auth.Env, File: o.Auth.File, Username: o.Auth.Username,
			Header: o.Auth.Header, Query: o.Auth.Query},
		Include: o.Include, Exclude: o.Exclude, Timeout: o.TimeoutDuration(), SpecTimeout: o.SpecTimeoutDuration(),
		MaxResponseBytes: o.MaxResponseBytes}
}

// Config is the section's search.Config.
func (s Search) Config() search.Config {
	e := s.Embeddings
	return search.Config{WordFiles: s.WordFiles, Embeddings: search.EmbeddingsConfig{URL: e.URL, Model: e.Model,
		APIKeyEnv: e.APIKeyEnv, Timeout: e.TimeoutDuration(), Weight: e.Weight}}
}

// Programs is the programs: section: programs as tools (tools/programs).
type Programs struct {
	// Dir holds the project's program files; if empty, .agents/programs in
	// the working directory.
	Dir string `yaml:"dir"`
	// MaxDepth is how deep programs may call programs; if 0, 3.
	MaxDepth int `yaml:"max_depth"`
	// MaxSaved caps the programs one principal saves; if 0, 100.
	MaxSaved int `yaml:"max_saved"`
	// Save offers the save_program tool; if absent, true.
	Save *bool `yaml:"save"`
}

func (p *Programs) check() error {
	if p.MaxDepth < 0 || p.MaxDepth > 16 {
		return fmt.Errorf("programs.max_depth: want 0 (the default, 3) to 16, got %d", p.MaxDepth)
	}
	if p.MaxSaved < 0 {
		return fmt.Errorf("programs.max_saved must not be negative")
	}
	return nil
}

// State is the state: section: the bounds of the state programs keep
// between runs.
type State struct {
	TTL      string `yaml:"ttl"`
	MaxTTL   string `yaml:"max_ttl"`
	MaxKeys  int    `yaml:"max_keys"`
	MaxBytes int64  `yaml:"max_bytes"`
}

// TTLDuration is state.ttl, 0 when absent.
func (s State) TTLDuration() time.Duration {
	d, _ := duration("", s.TTL, "")
	return d
}

// MaxTTLDuration is state.max_ttl, 0 when absent.
func (s State) MaxTTLDuration() time.Duration {
	d, _ := duration("", s.MaxTTL, "")
	return d
}

func (s *State) check() error {
	ttl, err := duration("state.ttl", s.TTL, "24h")
	if err != nil {
		return err
	}
	maxTTL, err := duration("state.max_ttl", s.MaxTTL, "720h")
	if err != nil {
		return err
	}
	if ttl > 0 && maxTTL > 0 && ttl > maxTTL {
		return fmt.Errorf("state.ttl (%s) is over state.max_ttl (%s)", ttl, maxTTL)
	}
	if s.MaxKeys < 0 || s.MaxBytes < 0 {
		return fmt.Errorf("state.max_keys and state.max_bytes must not be negative")
	}
	return nil
}
