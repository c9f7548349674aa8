package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/store"
)

// defaultConfigFile is read from the working directory when --config is not
// given and the file exists.
const defaultConfigFile = "sandcall.yaml"

// fileConfig is sandcall.yaml. Unknown keys are errors. Relative paths are
// relative to the file's directory. Flags override every value.
type fileConfig struct {
	Version int `yaml:"version"`
	// Policy is the policy file (--policy).
	Policy string `yaml:"policy"`
	// Audit is where audit records go: a file, or "-" for stderr (--audit).
	Audit string `yaml:"audit"`
	// Principal is who stdio sessions and `sandcall run` act for, and HTTP
	// clients when no tokens are configured. If absent, "local", no roles.
	Principal *principalConfig `yaml:"principal"`
	Auth      struct {
		// Tokens are the bearer tokens HTTP clients present, stored as the
		// hex SHA-256 of the token (`sandcall token hash`), never in clear.
		Tokens []tokenConfig `yaml:"tokens"`
		// JWT bearer tokens and the resource metadata (jwtauth.go).
		HostedAuthConfig `yaml:",inline"`
	} `yaml:"auth"`
	// Limits are the operator's ceilings; a request may only lower them.
	Limits struct {
		Timeout         string `yaml:"timeout"`
		MemoryMB        int    `yaml:"memory_mb"`
		MaxCalls        int    `yaml:"max_calls"`
		ApprovalTimeout string `yaml:"approval_timeout"`
		// MaxRequestStateBytes caps the sealed state of an approval asked
		// without a session (MCP 2026-07-28); if absent, 1 MiB
		// (mcpserver.Config.MaxRequestStateBytes).
		MaxRequestStateBytes int64 `yaml:"max_request_state_bytes"`
	} `yaml:"limits"`
	// Workers is the size of the worker pool (--workers).
	Workers int `yaml:"workers"`
	// Pool is the process tier's capacity (pool_config.go).
	Pool poolConfig `yaml:"pool"`
	// ListThreshold is how many tools run_code's description lists and
	// serve exposes as MCP tools before it names families and points to
	// search_tools instead (mcpserver.Config.ListThreshold). If absent, 30;
	// -1: no threshold.
	ListThreshold int `yaml:"list_threshold"`
	// HTTP holds the limits of `serve --http` (httplimits.go).
	HTTP httpConfig `yaml:"http"`
	// Store is where state shared by replicas lives: "memory:" (the
	// default, this process) or "redis://host:port[/db]". With Redis, every
	// replica naming it serves the same read_output refs, counts the same
	// rate-limit buckets and knows the same uploaded modules.
	Store string `yaml:"store"`
	// EnvPassthrough names variables of sandcall's environment passed on,
	// as they are, to local script tools and stdio upstream servers (a
	// token exported by the developer's shell or .envrc). Only these:
	// never the whole environment. --env adds more.
	EnvPassthrough []string `yaml:"env_passthrough"`
	// Tracing exports OpenTelemetry spans over OTLP/HTTP (otel.go); off
	// unless switched on.
	Tracing tracingConfig `yaml:"tracing"`
	// Programs and State: programs as tools and state between runs
	// (programs.go).
	Programs programsConfig `yaml:"programs"`
	State    stateConfig    `yaml:"state"`

	dir string
	// parsed durations
	timeout, approval time.Duration
}

type principalConfig struct {
	ID    string   `yaml:"id"`
	Roles []string `yaml:"roles"`
}

type tokenConfig struct {
	SHA256    string   `yaml:"sha256"`
	Principal string   `yaml:"principal"`
	Roles     []string `yaml:"roles"`
}

// loadConfig reads the config at path; with path empty, sandcall.yaml in the
// working directory if present, else the zero config. Problems are
// reported as file:line:col: message.
func loadConfig(path string) (*fileConfig, error) {
	explicit := path != ""
	if !explicit {
		path = defaultConfigFile
	}
	f, err := os.Open(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			c := &fileConfig{}
			return c, c.HTTP.check()
		}
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, err
	}
	var c fileConfig
	if err := yaml.UnmarshalWithOptions(src, &c, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return nil, configError(path, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
	if c.Version != 1 {
		return nil, bad("version: want 1, got %d", c.Version)
	}
	c.dir = filepath.Dir(path)
	if err := c.HTTP.check(); err != nil {
		return nil, bad("%v", err)
	}
	if c.Limits.Timeout != "" {
		if c.timeout, err = time.ParseDuration(c.Limits.Timeout); err != nil || c.timeout <= 0 {
			return nil, bad("limits.timeout: want a duration such as 30s, got %q", c.Limits.Timeout)
		}
	}
	if c.Store != "" {
		st, err := store.Open(c.Store)
		if err != nil {
			return nil, bad("store: %v", err)
		}
		st.Close()
	}
	if c.Limits.ApprovalTimeout != "" {
		if c.approval, err = time.ParseDuration(c.Limits.ApprovalTimeout); err != nil || c.approval <= 0 {
			return nil, bad("limits.approval_timeout: want a duration such as 2m, got %q", c.Limits.ApprovalTimeout)
		}
	}
	if c.Limits.MemoryMB < 0 || c.Limits.MaxCalls < 0 || c.Workers < 0 || c.Limits.MaxRequestStateBytes < 0 {
		return nil, bad("limits and workers must not be negative")
	}
	if err := c.Pool.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Programs.check(); err != nil {
		return nil, bad("%v", err)
	}
	if err := c.State.check(); err != nil {
		return nil, bad("%v", err)
	}
	if c.Principal != nil && c.Principal.ID == "" {
		return nil, bad("principal.id is required")
	}
	for i, name := range c.EnvPassthrough {
		if !envNameRE().MatchString(name) {
			return nil, bad("env_passthrough[%d]: %q is not a variable name (want letters, digits and _, not starting with a digit)", i, name)
		}
	}
	if err := c.Auth.check(); err != nil {
		return nil, bad("%v", err)
	}
	for i, t := range c.Auth.Tokens {
		if t.Principal == "" {
			return nil, bad("auth.tokens[%d].principal is required", i)
		}
		if len(t.SHA256) != 64 || strings.Trim(strings.ToLower(t.SHA256), "0123456789abcdef") != "" {
			return nil, bad("auth.tokens[%d].sha256: want the 64 hex digits of 'sandcall token hash', not the token", i)
		}
	}
	return &c, nil
}

func configError(path string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := oneLine(ye.GetMessage())
		msg = strings.Replace(msg, "unknown field ", "unknown key ", 1)
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Errorf("%s:%d:%d: %s", path, tk.Position.Line, tk.Position.Column, msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	return fmt.Errorf("%s: %s", path, oneLine(err.Error()))
}

// path resolves a path from the config relative to the config's directory.
func (c *fileConfig) path(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

// principal is the configured local principal.
func (c *fileConfig) principal() bindings.Principal {
	if c == nil || c.Principal == nil {
		return bindings.LocalPrincipal
	}
	return bindings.Principal{ID: c.Principal.ID, Roles: c.Principal.Roles}
}

// tokens are the configured bearer tokens.
func (c *fileConfig) tokens() []bearer.Token {
	if c == nil {
		return nil
	}
	out := make([]bearer.Token, len(c.Auth.Tokens))
	for i, t := range c.Auth.Tokens {
		out[i] = bearer.Token{SHA256: t.SHA256, Principal: bindings.Principal{ID: t.Principal, Roles: t.Roles}}
	}
	return out
}

// envNameRE matches an environment variable name.
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
