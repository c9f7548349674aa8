package cli

import (
	"fmt"
	"slices"

	"github.com/sandcall/sandcall/tools/upstream"
)

// builtinTools are the tools sandcall itself serves (docs/mcp.md) and the
// names a program's runtime keeps for itself. A script never takes one.
var builtinTools = []string{"run_code", "read_output", "search_tools", "describe_tools", "call"}

// reservedNames says which tool names a local script may not take, and
// why: the built-in tools, then the names of the upstream servers of the
// project (every <server>_… name belongs to its server, so that a
// script can never shadow a pinned upstream tool, whether the server is up
// yet or not). Precedence: built-in, then upstream, then script.
func reservedNames(lc upstream.LoadConfig) func(string) string {
	cfg := upstream.Load(lc)
	type owner struct{ prefix, server string }
	var owners []owner
	for _, en := range cfg.Entries {
		owners = append(owners, owner{upstream.ToolPrefix(en.Name), en.Name})
	}
	return func(name string) string {
		if slices.Contains(builtinTools, name) {
			return fmt.Sprintf("%s is a built-in tool of sandcall; a script cannot replace it (rename the script, e.g. %s_script)", name, name)
		}
		for _, o := range owners {
			if len(name) > len(o.prefix) && name[:len(o.prefix)] == o.prefix {
				return fmt.Sprintf("names starting with %s belong to the upstream server %q, whose tools win over scripts (rename the script)", o.prefix, o.server)
			}
		}
		return ""
	}
}

// passEnv is the variables passed to scripts and stdio upstream servers:
// env_passthrough from the config file, then --env.
func (c *common) passEnv() []string {
	var out []string
	if c.cfg != nil {
		out = append(out, c.cfg.EnvPassthrough...)
	}
	for _, n := range c.envPass {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// upstreamConfig says where serve and run read upstream servers: the
// project's configs, or only the --mcp-config files.
func (c *common) upstreamConfig() upstream.LoadConfig {
	if len(c.mcpFiles) > 0 {
		return upstream.LoadConfig{Root: ".", Files: c.mcpFiles, FilesOnly: true}
	}
	return upstream.LoadConfig{Root: "."}
}
