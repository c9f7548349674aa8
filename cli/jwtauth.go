package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"

	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/cli/config"
)

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
func (f *hostedFlags) hosted(c *config.File, addr string) (mcpserver.HostedAuth, error) {
	a := c.Auth.HostedAuth
	h := mcpserver.HostedAuth{PublicURL: a.PublicURL, AuthorizationServers: a.AuthorizationServers, ScopesSupported: a.ScopesSupported}
	if *f.publicURL != "" {
		h.PublicURL = *f.publicURL
	}
	j := a.JWT
	if *f.jwksURL != "" || *f.issuer != "" || *f.audience != "" {
		if j == nil {
			j = &config.JWT{}
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
	jc, err := jwtConfig(j)
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

// jwtConfig checks auth.jwt and converts it; its errors name the keys.
func jwtConfig(j *config.JWT) (*bearer.JWTConfig, error) {
	if err := j.Check(); err != nil {
		return nil, err
	}
	return &bearer.JWTConfig{JWKSURL: j.JWKSURL, Issuer: j.Issuer, Audience: j.Audience, PrincipalClaim: j.PrincipalClaim,
		RolesClaim: j.RolesClaim, Scopes: j.RequiredScopes, Algorithms: j.Algorithms, AllowHTTP: j.AllowHTTP,
		Leeway: j.LeewayDuration(), RefreshInterval: j.RefreshIntervalDuration()}, nil
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
