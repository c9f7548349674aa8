package openapi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

// FuzzBuild: whatever the spec, building its tools never panics, and the
// tools it makes go into a catalog (valid, distinct names; input schemas
// that compile) and render as TypeScript.
func FuzzBuild(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a/{b}":{"get":{"parameters":[{"name":"b","in":"path","schema":{"$ref":"#/paths/~1a~1{b}/get/parameters/0/schema"}}],"responses":{"200":{"description":"x","content":{"application/json":{"schema":{"type":["object","null"],"properties":{"p":{"pattern":"(?<=x)"}}}}}}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := &Config{Name: "fz", Spec: "spec.yaml", BaseURL: "https://api.example"}
		s, err := build(cfg, data, nil)
		if err != nil {
			return
		}
		if _, err := tools.NewCatalog(withHandlers(s.Tools())...); err != nil {
			t.Fatalf("the tools do not go into a catalog: %v", err)
		}
		for _, tl := range s.Tools() {
			if len(tsdecl.Declaration(tl)) > tsdecl.MaxDeclarationBytes {
				t.Fatalf("%s: declaration over its cap", tl.Name)
			}
		}
	})
}

func withHandlers(ts []*tools.Tool) []*tools.Tool {
	for _, t := range ts {
		t.Handler = nopHandler
	}
	return ts
}
