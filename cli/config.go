package cli

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/cli/config"
)

// defaultConfigFile is the project's config file, read from the project
// root when --config is not given (cli/config has the schema and the
// loading every command shares).
const defaultConfigFile = config.ProjectFile

// principalOf is the configured local principal.
func principalOf(c *config.File) bindings.Principal {
	if c == nil || c.Principal == nil {
		return bindings.LocalPrincipal
	}
	return bindings.Principal{ID: c.Principal.ID, Roles: c.Principal.Roles}
}

// tokensOf are the configured bearer tokens.
func tokensOf(c *config.File) []bearer.Token {
	if c == nil {
		return nil
	}
	out := make([]bearer.Token, len(c.Auth.Tokens))
	for i, t := range c.Auth.Tokens {
		out[i] = bearer.Token{SHA256: t.SHA256, Principal: bindings.Principal{ID: t.Principal, Roles: t.Roles}}
	}
	return out
}

// ignoredKeysMessage is the warning about the keys of the project's
// sandcall.yaml left out because they need trust.
func ignoredKeysMessage(l *config.Loaded) string {
	user := config.UserFile()
	if user == "" {
		user = "the user's config directory"
	}
	return fmt.Sprintf("%s sets %s, which a project's own file may set only once trusted: ignored; review them, then run "+
		"'sandcall servers trust' in the project (the operator's own settings go in %s, or a file named with --config)",
		l.ProjectRel, strings.Join(l.Ignored, ", "), user)
}

// envNameRE matches an environment variable name.
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
