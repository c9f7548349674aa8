package upstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// pinOf loads the one server of a .mcp.json holding def in root and pins
// it.
func pinOf(t *testing.T, root string, def map[string]any) ([]string, error) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(b))
	cfg := Load(LoadConfig{Root: root})
	if len(cfg.Entries) != 1 {
		t.Fatalf("entries: %+v", cfg)
	}
	p, err := Pin(cfg.Entries[0], root)
	var files []string
	for f := range p.Files {
		files = append(files, f)
	}
	sort.Strings(files)
	return files, err
}

// TestPinNamesWhatRuns: trust pins the project files a server runs or
// loads as code (the script of `sh ./start.sh`, a project-local
// executable, a module an env value requires, an envFile), not the data
// files it names (its JSON database changes as it works).
func TestPinNamesWhatRuns(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "start.sh"), "exec true\n")
	writeFile(t, filepath.Join(root, "server"), "#!/bin/sh\n")
	writeFile(t, filepath.Join(root, "hook.js"), "1\n")
	writeFile(t, filepath.Join(root, "memory.json"), "{}\n")
	writeFile(t, filepath.Join(root, ".env"), "A=1\n")
	if err := os.Chmod(filepath.Join(root, "server"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		def  map[string]any
		want []string
	}{
		{map[string]any{"command": "sh", "args": []string{"./start.sh"}}, []string{"start.sh"}},
		{map[string]any{"command": "sh", "args": []string{"-c", "./start.sh --x"}}, []string{"start.sh"}},
		{map[string]any{"command": "./server"}, []string{"server"}},
		{map[string]any{"command": "node", "args": []string{"server"}}, []string{"server"}},
		{map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-memory"},
			"env": map[string]any{"MEMORY_FILE_PATH": "./memory.json", "NODE_OPTIONS": "--require ./hook.js"}}, []string{"hook.js"}},
		{map[string]any{"command": "sh", "args": []string{"x"}, "envFile": "${workspaceFolder}/.env"}, []string{".env"}},
	} {
		got, err := pinOf(t, root, tc.def)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Pin(%v) files = %q, %v; want %q", tc.def, got, err, tc.want)
		}
	}
}

// TestPinSeesEdits: an edited start.sh, even rewritten to the same size
// with its modification time put back, is a changed pin; a new timeout or
// "enabled" is not.
func TestPinSeesEdits(t *testing.T) {
	root := t.TempDir()
	start := filepath.Join(root, "start.sh")
	writeFile(t, start, "exec a\n")
	fi, _ := os.Stat(start)
	def := map[string]any{"command": "sh", "args": []string{"./start.sh"}}
	pin := func() []string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
		writeFile(t, filepath.Join(root, ".mcp.json"), string(b))
		p, err := Pin(Load(LoadConfig{Root: root}).Entries[0], root)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(p)
		return []string{string(b)}
	}
	first := pin()
	def["timeout"] = "10s"
	def["enabled"] = true
	if again := pin(); !reflect.DeepEqual(first, again) {
		t.Errorf("timeout and enabled changed the pin")
	}
	writeFile(t, start, "exec b\n")
	if err := os.Chtimes(start, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if again := pin(); reflect.DeepEqual(first, again) {
		t.Errorf("a same-size rewrite with its mtime put back kept the pin")
	}
}

// TestPinRefusesFIFO: a server that names a FIFO (or a device) cannot be
// pinned, so it cannot be trusted; nothing blocks.
func TestPinRefusesFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "start.sh"), 0o600); err != nil {
		t.Skip(err)
	}
	_, err := pinOf(t, root, map[string]any{"command": "sh", "args": []string{"./start.sh"}})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Pin of a server naming a FIFO: %v", err)
	}
}

// TestCodeFilesData checks codefiles.txt: every entry an extension with
// its dot, lower case, listed once.
func TestCodeFilesData(t *testing.T) {
	seen := map[string]bool{}
	for i, line := range strings.Split(codeFilesTxt, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, ext := range strings.Fields(line) {
			if !strings.HasPrefix(ext, ".") || len(ext) < 2 || strings.ToLower(ext) != ext || seen[ext] {
				t.Errorf("codefiles.txt:%d: %q: want a new lower-case extension with its dot", i+1, ext)
			}
			seen[ext] = true
		}
	}
	if !codeExts()[".sh"] || !codeExts()[".js"] || codeExts()[".json"] {
		t.Error("codeExts")
	}
}

// TestWhatRuns: what a person reads before trusting a server names the
// variables and headers it sets, its envFile and its !commands.
func TestWhatRuns(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".env"), "A=1\n")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"s": map[string]any{"command": "npx", "args": []string{"-y", "x"}, "env": map[string]any{"TOKEN": "${HOME}"}, "envFile": "${workspaceFolder}/.env"},
		"h": map[string]any{"url": "https://mcp.example/mcp", "headers": map[string]any{"Authorization": "!gh auth token"}},
	}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(b))
	cfg := Load(LoadConfig{Root: root})
	h, _ := cfg.Lookup("h")
	s, _ := cfg.Lookup("s")
	if got := WhatRuns(h.Server); got != "connects to https://mcp.example/mcp sending headers Authorization; runs gh auth token for headers.Authorization" {
		t.Errorf("WhatRuns(h) = %q", got)
	}
	if got := WhatRuns(s.Server); !strings.HasPrefix(got, "runs npx -y x with env A, TOKEN (env from ") {
		t.Errorf("WhatRuns(s) = %q", got)
	}
}
