package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/upstream"
)

// Project trust. A project's MCP configs (.mcp.json and friends) and its
// scripts in .agents/tools come with the repository: anyone who can push to
// it chooses what they run. serve, run, tools list and tools lint start a
// project's servers (and run their "!command" values) and make its scripts
// tools only once a person has trusted them with `sandcall servers trust`,
// which pins each by the hash of what runs in .sandcall/trust.json; a
// changed definition or script needs trust again. --trust-project trusts
// everything for one invocation (CI, a checkout you own).

// serverTrust decides which configured servers may start; nil (all may)
// with --trust-project.
func serverTrust(all bool, root string) func(upstream.Entry) bool {
	if all {
		return nil
	}
	t, err := upstream.OpenTrust(filepath.Join(root, upstream.DefaultTrustFile))
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %v; no project server is trusted\n", err)
		return func(upstream.Entry) bool { return false }
	}
	return t.Trusted
}

// scriptTrust decides which scripts of the project's tools directory may
// become tools; nil (all may) with --trust-project or a directory named
// with --tools-dir (the operator's choice, not the project's).
func scriptTrust(all bool, explicitDir bool) func(string) bool {
	if all || explicitDir {
		return nil
	}
	t, err := upstream.OpenTrust(upstream.DefaultTrustFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %v; no project script is trusted\n", err)
		return func(string) bool { return false }
	}
	return func(path string) bool {
		b, err := os.ReadFile(path)
		return err == nil && t.ScriptTrusted(path, b)
	}
}

// serversTrust is `sandcall servers trust`: it records every server
// of the project's configs and every script of .agents/tools as trusted,
// printing what each runs.
func serversTrust(e *env, cfg *upstream.Config, root string) int {
	t, err := upstream.OpenTrust(filepath.Join(root, upstream.DefaultTrustFile))
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall servers trust: %v\n", err)
		return exitFailure
	}
	n := 0
	for _, en := range cfg.Entries {
		// The definition as written is trusted, even one that does not
		// resolve here and now (a ${VAR} unset in this shell).
		if err := t.TrustServer(en); err != nil {
			fmt.Fprintf(e.stderr, "sandcall servers trust: %s: %v\n", en.Name, err)
			return exitFailure
		}
		what := fmt.Sprintf("not valid here (%v)", en.Err)
		if en.Server != nil {
			what = "it " + upstream.WhatRuns(en.Server)
		}
		fmt.Fprintf(e.stdout, "trusted server %s (%s): %s\n", en.Name, en.Source, what)
		n++
	}
	dir := filepath.Join(root, local.DefaultDir)
	des, _ := os.ReadDir(dir)
	names := make([]string, 0, len(des))
	for _, de := range des {
		if de.Type().IsRegular() || de.Type()&os.ModeSymlink != 0 {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		// The key is the path serve sees, relative to the working
		// directory it runs in (the project root).
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		t.TrustScript(filepath.Join(dir, name), b)
		fmt.Fprintf(e.stdout, "trusted script %s\n", filepath.Join(local.DefaultDir, name))
		n++
	}
	n += trustPrograms(e.stdout, t, root) // programs.go
	if err := t.Save(); err != nil {
		fmt.Fprintf(e.stderr, "sandcall servers trust: %v\n", err)
		return exitFailure
	}
	if n == 0 {
		fmt.Fprintln(e.stdout, "nothing to trust: no server in the project's MCP configs and no script in "+local.DefaultDir)
	}
	return exitOK
}
