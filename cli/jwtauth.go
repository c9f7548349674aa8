package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
)

// HostedAuthConfig is the hosted-auth part of sandcall.yaml's "auth:"
// section (inline beside auth.tokens):
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
type HostedAuthConfig struct {
	PublicURL            string         `yaml:"public_url"`
	AuthorizationServers stringList     `yaml:"authorization_servers"`
	ScopesSupported      stringList     `yaml:"scopes_supported"`
	JWT                  *jwtFileConfig `yaml:"jwt"`
}

type jwtFileConfig struct {
	JWKSURL         string     `yaml:"jwks_url"`
	Issuer          string     `yaml:"issuer"`
	Audience        stringList `yaml:"audience"`
	PrincipalClaim  string     `yaml:"principal_claim"`
	RolesClaim      string     `yaml:"roles_claim"`
	RequiredScopes  stringList `yaml:"required_scopes"`
	Leeway          string     `yaml:"leeway"`
	Algorithms      stringList `yaml:"algorithms"`
	RefreshInterval string     `yaml:"refresh_interval"`
	AllowHTTP       bool       `yaml:"allow_http"`
}

// stringList is a list of strings in YAML that may also be written as one
// string (audience: https://sandcall.example.com/mcp).
type stringList []string

func (l *stringList) UnmarshalYAML(unmarshal func(any) error) error {
	var one string
	if err := unmarshal(&one); err == nil {
		*l = stringList{one}
		return nil
	}
	var many []string
	if err := unmarshal(&many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*l = many
	return nil
}

// hostedFlags are serve's flags for hosted auth; each overrides the config.
type hostedFlags struct {
	publicURL, jwksURL, issuer, audience *string
}

func registerHostedFlags(fs *flag.FlagSet) *hostedFlags {
	return &hostedFlags{
		publicURL: fs.String("public-url", "", "the URL clients reach this server at (scheme://host[:port]; behind a load balancer, not the listen address): "+
			"the resource named in the OAuth protected resource metadata and the default JWT audience (auth.public_url)"),
		jwksURL: fs.String("auth-jwks-url", "", "accept JWT bearer tokens signed by the keys published at this JWKS URL (auth.jwt.jwks_url); needs --auth-issuer"),
		issuer:  fs.String("auth-issuer", "", "the issuer (iss) JWT bearer tokens must carry (auth.jwt.issuer)"),
		audience: fs.String("auth-audience", "", "comma-separated audiences (aud) a JWT must name one of (auth.jwt.audience); "+
			"default: the public URL + /mcp, and the public URL"),
	}
}

// set reports whether any of the flags was given.
func (f *hostedFlags) set() bool {
	return *f.publicURL != "" || *f.jwksURL != "" || *f.issuer != "" || *f.audience != ""
}

// hosted returns mcpserver's HostedAuth from the config and the flags.
// addr is serve's --http address: without a public URL, JWTs on a
// non-loopback address need an explicit audience.
func (f *hostedFlags) hosted(c *fileConfig, addr string) (mcpserver.HostedAuth, error) {
	a := c.Auth.HostedAuthConfig
	h := mcpserver.HostedAuth{PublicURL: a.PublicURL, AuthorizationServers: a.AuthorizationServers, ScopesSupported: a.ScopesSupported}
	if *f.publicURL != "" {
		h.PublicURL = *f.publicURL
	}
	j := a.JWT
	if *f.jwksURL != "" || *f.issuer != "" || *f.audience != "" {
		if j == nil {
			j = &jwtFileConfig{}
		} else {
			cp := *j
			j = &cp
		}
		if *f.jwksURL != "" {
			j.JWKSURL = *f.jwksURL
		}
		if *f.issuer != "" {
			j.Issuer = *f.issuer
		}
		if *f.audience != "" {
			j.Audience = strings.Split(*f.audience, ",")
		}
	}
	if j == nil {
		return h, nil
	}
	jc, err := j.config()
	if err != nil {
		return h, err
	}
	h.JWT = jc
	if h.PublicURL == "" && len(jc.Audience) == 0 {
		host, _, _ := net.SplitHostPort(addr)
		if !isLoopbackHost(host) {
			return h, errors.New("JWT bearer tokens need --public-url (auth.public_url): the URL clients reach this server at, " +
				"which names the resource and is the tokens' audience (or set auth.jwt.audience)")
		}
	}
	return h, nil
}

// config checks the section and converts it; its errors name the keys.
func (j *jwtFileConfig) config() (*bearer.JWTConfig, error) {
	if j.JWKSURL == "" {
		return nil, errors.New("auth.jwt.jwks_url (--auth-jwks-url) is required: where the token issuer publishes its public keys")
	}
	if j.Issuer == "" {
		return nil, errors.New("auth.jwt.issuer (--auth-issuer) is required with a JWKS URL: the exact iss claim the tokens carry")
	}
	c := &bearer.JWTConfig{JWKSURL: j.JWKSURL, Issuer: j.Issuer, Audience: j.Audience, PrincipalClaim: j.PrincipalClaim,
		RolesClaim: j.RolesClaim, Scopes: j.RequiredScopes, Algorithms: j.Algorithms, AllowHTTP: j.AllowHTTP}
	var err error
	if j.Leeway != "" {
		if c.Leeway, err = time.ParseDuration(j.Leeway); err != nil || c.Leeway <= 0 {
			return nil, fmt.Errorf("auth.jwt.leeway: want a duration such as 30s, got %q", j.Leeway)
		}
	}
	if j.RefreshInterval != "" {
		if c.RefreshInterval, err = time.ParseDuration(j.RefreshInterval); err != nil || c.RefreshInterval <= 0 {
			return nil, fmt.Errorf("auth.jwt.refresh_interval: want a duration such as 30s, got %q", j.RefreshInterval)
		}
	}
	return c, nil
}

// check validates the section at load time (flags may complete it later).
func (a *HostedAuthConfig) check() error {
	if a.JWT == nil {
		return nil
	}
	_, err := a.JWT.config()
	return err
}

// hostedNote says on stderr that JWTs are accepted, and returns 1 if they
// are (they count as a way to authenticate for --allow-remote), else 0.
func hostedNote(e *env, h mcpserver.HostedAuth) int {
	if h.JWT == nil {
		return 0
	}
	fmt.Fprintf(e.stderr, "JWT bearer tokens accepted: issuer %s, keys from %s; principals are jwt:<%s>\n",
		h.JWT.Issuer, h.JWT.JWKSURL, cmp.Or(h.JWT.PrincipalClaim, "sub"))
	return 1
}
