package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestUpstreamContentTypes runs a program against the npm "everything"
// server: an image, resource links and an embedded resource reach the
// program as objects ({type, mimeType, data}, {type, uri, name},
// {type, uri, text}), where they used to be dropped.
func TestUpstreamContentTypes(t *testing.T) {
	t.Parallel()
	dir := everythingProject(t)
	out := runProgramIn(t, dir, `const img = await tools.everything_get_tiny_image({});
const links = await tools.everything_get_resource_links({count: 2});
const ref = await tools.everything_get_resource_reference({resourceType: "Text", resourceId: 1});
return {img, links, ref};`)
	type block struct {
		Type, Text, MIMEType, Data, URI, Name string
	}
	var got struct{ Img, Links, Ref []block }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	find := func(bs []block, typ string) *block {
		for i := range bs {
			if bs[i].Type == typ {
				return &bs[i]
			}
		}
		return nil
	}
	if b := find(got.Img, "image"); b == nil || b.MIMEType != "image/png" {
		t.Errorf("no PNG image block: %+v", got.Img)
	} else if png, err := base64.StdEncoding.DecodeString(b.Data); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("image data is not a base64 PNG (%v)", err)
	}
	if find(got.Img, "text") == nil {
		t.Errorf("the image's text block is missing: %+v", got.Img)
	}
	if b := find(got.Links, "resource_link"); b == nil || b.URI == "" || b.Name == "" {
		t.Errorf("no resource link with uri and name: %+v", got.Links)
	}
	if b := find(got.Ref, "resource"); b == nil || b.URI == "" || b.Text == "" {
		t.Errorf("no embedded resource with uri and text: %+v", got.Ref)
	}
}

// TestUpstreamRoots: an upstream that asks for the client's roots (the npm
// "everything" server's get_roots_list) gets the project root, where
// sandcall runs, instead of an empty list.
func TestUpstreamRoots(t *testing.T) {
	t.Parallel()
	dir := everythingProject(t)
	out := runProgramIn(t, dir, `return await tools.everything_get_roots_list({});`)
	real, _ := filepath.EvalSymlinks(dir)
	if !bytes.Contains(out, []byte("URI: file://"+dir)) && !bytes.Contains(out, []byte("URI: file://"+real)) {
		t.Errorf("the project root %s is not among the roots: %s", dir, out)
	}
}

// everythingProject returns a project directory whose .mcp.json names the
// npm "everything" server (installed by the test) as server "everything".
func everythingProject(t *testing.T) string {
	t.Helper()
	bins := installNPMServers(t)
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": filepath.Join(bins, "mcp-server-everything")}}})
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runProgramIn runs src with `sandcall run --trust-project` (in-process
// tier) in dir and returns its stdout; a failed run fails the test.
func runProgramIn(t *testing.T, dir, src string) []byte {
	t.Helper()
	prog := filepath.Join(dir, "prog.js")
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--trust-project", "--isolation", "inprocess", prog)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return out
}
