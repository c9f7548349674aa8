package cli

import (
	"fmt"
	"slices"

	"github.com/sandcall/sandcall/tools/projfile"

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

// upstreamConfig says where every command reads upstream servers: the
// --mcp-config files only; else the servers --config-file files, the
// project's configs (.cursor/mcp.json, .vscode/mcp.json, .mcp.json,
// mcp.json), and the files a sandcall entry of those reads with
// --mcp-config (the layout of a client that starts `sandcall serve
// --mcp-config .sandcall/mcp.json`), so that a command run by hand in the
// project sees the servers that client's sandcall serves.
func (c *common) upstreamConfig() upstream.LoadConfig {
	if len(c.mcpFiles) > 0 {
		return upstream.LoadConfig{Root: c.root(), Files: c.mcpFiles, FilesOnly: true}
	}
	return upstream.LoadConfig{Root: c.root(), Files: append(append([]string(nil), c.configFiles...), c.selfConfigs()...)}
}

// selfConfigs returns the MCP config files that the project's sandcall
// entries read with --mcp-config, when they are files of the project (a
// project's entry may not make sandcall read a file outside it).
func (c *common) selfConfigs() []string {
	if c.adoptOK {
		return c.adopted
	}
	c.adoptOK = true
	root := c.root()
	cfg := upstream.Load(upstream.LoadConfig{Root: root, Files: c.configFiles})
	for _, en := range cfg.Entries {
		if en.Server == nil || !upstream.IsSelf(en.Server, "", root) {
			continue
		}
		for _, f := range upstream.SelfMCPConfigs(en.Server, root) {
			if _, inside, err := projfile.Inside(root, f); err != nil {
				c.warn(fmt.Sprintf("server %q (%s) runs sandcall with --mcp-config %s: %v", en.Name, en.Source, projfile.Rel(root, f), err))
				continue
			} else if !inside {
				c.warn(fmt.Sprintf("server %q (%s) runs sandcall with --mcp-config %s, which is not a file of the project: not read", en.Name, en.Source, f))
				continue
			}
			if !slices.Contains(c.adopted, f) {
				c.adopted = append(c.adopted, f)
			}
		}
	}
	return c.adopted
}
