package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/openapi/openapitest"
	"github.com/sandcall/sandcall/tools/search"
)

// TestGitHubWithPrism loads GitHub's own description, finds and describes
// the tool that creates an issue, and calls several operations of a real
// mock server through a recording proxy: the token reaches the server,
// and never a result, an error or a log.
func TestGitHubWithPrism(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: installs GitHub's description and Prism from npm")
	}
	spec := openapitest.GitHubSpec(t)
	prism := openapitest.StartPrism(t, spec)
	target, _ := url.Parse(prism)
	var mu sync.Mutex
	var auths []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	defer proxy.Close()

	const token = "ghp_0123456789abcdefABCDEF0123456789abcd"
	logs := captureLogs(t)
	src, err := Load(context.Background(), Config{Name: "github", Spec: spec, BaseURL: proxy.URL,
		Auth:      Auth{Type: AuthBearer, Env: "GITHUB_TOKEN"},
		LookupEnv: func(k string) (string, bool) { return token, k == "GITHUB_TOKEN" }})
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := tools.NewCatalog()
	added, errs := src.AddTo(cat)
	if len(errs) > 0 || len(added) < 1000 {
		t.Fatalf("%d tools added, errors: %v", len(added), errs)
	}
	t.Logf("%d tools from %s (%s)", len(added), filepath.Base(spec), src.Version())

	found := search.New(cat.List()).Search(context.Background(), "create an issue", 3, nil)
	var top []string
	for _, h := range found.Hits {
		top = append(top, h.Tool.Name)
	}
	if !containsName(top, "github_issues_create") {
		t.Errorf(`search "create an issue": top 3 %v, want github_issues_create among them`, top)
	}
	create, _ := cat.Lookup("github_issues_create")
	decl := tsdecl.Declaration(create)
	mustContain(t, "issues/create declaration", decl, "github_issues_create(args: {", "owner: string;", "repo: string;", "body: {", "title: string | number;")

	call := func(name, args string) (json.RawMessage, error) {
		tl, ok := cat.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		return tl.Call(context.Background(), json.RawMessage(args))
	}
	res, err := call("github_issues_create", `{"owner":"octo","repo":"hello","body":{"title":"Found a bug","labels":["bug"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	var issue struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(res, &issue) != nil || issue.Number == 0 {
		t.Errorf("issues/create: %.300s", res)
	}
	// A program's fan-out: several operations at once.
	var g errgroup.Group
	results := make([]json.RawMessage, 4)
	for i, c := range []struct{ name, args string }{
		{"github_issues_list_for_repo", `{"owner":"octo","repo":"hello","state":"open","per_page":5}`},
		{"github_repos_get", `{"owner":"octo","repo":"hello"}`},
		{"github_pulls_list", `{"owner":"octo","repo":"hello"}`},
		{"github_users_get_by_username", `{"username":"octocat"}`},
	} {
		g.Go(func() error {
			r, err := call(c.name, c.args)
			if err != nil {
				return errors.New(c.name + ": " + err.Error())
			}
			results[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	var repo map[string]any
	if json.Unmarshal(results[0], &list) != nil || json.Unmarshal(results[1], &repo) != nil || repo["full_name"] == nil {
		t.Errorf("list and get: %.200s / %.200s", results[0], results[1])
	}
	// Prism checks the request against the spec: a date that is not one
	// (the schema's format, which sandcall does not check) comes back as
	// an HTTP error.
	_, err = call("github_issues_list_for_repo", `{"owner":"octo","repo":"hello","since":"not a date"}`)
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.EToolFailed || !strings.Contains(se.Message, "HTTP 422") {
		t.Errorf("an invalid date: %v", err)
	}
	mu.Lock()
	n := len(auths)
	for _, a := range auths {
		if a != "Bearer "+token {
			t.Errorf("the server saw Authorization %q, want the configured token", a)
		}
	}
	mu.Unlock()
	if n < 6 {
		t.Errorf("the proxy saw %d requests, want 6", n)
	}
	texts := []string{string(res), logs.String()}
	for _, r := range results {
		texts = append(texts, string(r))
	}
	if err != nil {
		texts = append(texts, err.Error(), se.Hint)
	}
	for _, s := range texts {
		if strings.Contains(s, token) {
			t.Errorf("the token leaked: %.300s", s)
		}
	}
}

func containsName(names []string, want string) bool {
	for _, n := range names {
		if n == want {
			return true
		}
	}
	return false
}

// BenchmarkLoadGitHub loads GitHub's description (1,223 operations),
// timing in each iteration, one after the other (so that a busy machine
// weighs on them alike): parse, libopenapi's part (document and model);
// load, the whole of Load (tools, schemas, descriptions); add, the
// catalog's part (each input schema compiled). ns/op is the three
// together; the allocations are Load's and the catalog's.
func BenchmarkLoadGitHub(b *testing.B) {
	spec := openapitest.GitHubSpec(b)
	data, err := os.ReadFile(spec)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var parse, load, add time.Duration
	var n int
	for b.Loop() {
		t0 := time.Now()
		if _, err := build(&Config{Name: "github", Spec: spec, Include: []string{"-none-"}}, data, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s, err := Load(context.Background(), Config{Name: "github", Spec: spec})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := tools.NewCatalog(s.Tools()...); err != nil {
			b.Fatal(err)
		}
		parse, load, add = parse+t1.Sub(t0), load+t2.Sub(t1), add+time.Since(t2)
		n = len(s.Tools())
	}
	per := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(per(parse), "parse-ms")
	b.ReportMetric(per(load), "load-ms")
	b.ReportMetric(per(add), "add-ms")
	b.ReportMetric(float64(n), "tools")
}
