package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools/openapi/openapitest"
)

// petStore is a small API behind the spec testdata/openapi/pets.yaml that
// records the Authorization header of every request.
type petStore struct {
	mu    sync.Mutex
	auths []string
}

func (p *petStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.auths = append(p.auths, r.Header.Get("Authorization"))
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/pets":
		kind := r.URL.Query().Get("kind")
		var out []map[string]any
		for i, k := range []string{"cat", "dog", "cat"} {
			if kind == "" || kind == k {
				out = append(out, map[string]any{"id": i + 1, "name": fmt.Sprintf("pet%d", i+1), "kind": k})
			}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == "GET" && r.URL.Path == "/api/pets/1":
		fmt.Fprint(w, `{"id": 1, "name": "pet1", "kind": "cat"}`)
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/api/pets/"):
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message": "no such pet; your header was %s"}`, r.Header.Get("Authorization"))
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (p *petStore) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auths...)
}

// petConfig writes an operator's config naming the pet store as an
// OpenAPI source (its spec copied into dir) and returns its path.
func petConfig(t *testing.T, dir, baseURL string) string {
	t.Helper()
	spec, err := os.ReadFile(filepath.Join("testdata", "openapi", "pets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "pets.yaml", string(spec))
	return writeFile(t, dir, "operator.yaml", fmt.Sprintf(`version: 1
openapi:
  - name: pets
    spec: pets.yaml
    base_url: %s/api
    auth: {type: bearer, env: PETS_TOKEN}
`, baseURL))
}

const petsToken = "pets-secret-0123456789abcdefghij"

// TestOpenAPISource: an API's operations are tools through the binary —
// listed, found, described in TypeScript, called from a program that fans
// out and returns a compact result; the token reaches the API and never
// the program, an error, the output or the audit.
func TestOpenAPISource(t *testing.T) {
	t.Parallel()
	store := &petStore{}
	srv := httptest.NewServer(store)
	defer srv.Close()
	dir := t.TempDir()
	cfg := petConfig(t, dir, srv.URL)
	env := []string{"PETS_TOKEN=" + petsToken}

	out, errOut, code := sandcallIn(t, dir, env, "tools", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "pets_list_pets") || !strings.Contains(out, "pets_delete_pet") {
		t.Fatalf("tools list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = sandcallIn(t, dir, env, "tools", "search", "--config", cfg, "--json", "remove a pet from the store")
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &found) != nil || len(found.Tools) == 0 || found.Tools[0].Name != "pets_delete_pet" {
		t.Errorf("tools search: exit %d, %s%s", code, out, errOut)
	}
	out, errOut, code = sandcallIn(t, dir, env, "tools", "describe", "--config", cfg, "pets_create_pet")
	if code != 0 || !strings.Contains(out, "pets_create_pet(args: {") || !strings.Contains(out, "body: {") || !strings.Contains(out, `kind: "cat" | "dog"`) {
		t.Errorf("tools describe: exit %d\n%s%s", code, out, errOut)
	}

	audit := filepath.Join(dir, "audit.jsonl")
	prog := writeFile(t, dir, "prog.js", `
const [cats, dogs] = await Promise.all([tools.pets_list_pets({kind: "cat"}), tools.pets_list_pets({kind: "dog"})]);
const one = await tools.pets_get_pet({id: 1});
let missing = null;
try { await tools.pets_get_pet({id: 9}); } catch (e) { missing = e.code + ": " + e.message; }
return {cats: cats.length, dogs: dogs.length, first: one.name, missing};`)
	out, errOut, code = sandcallIn(t, dir, env, "run", "--config", cfg, "--json", "--audit", audit, prog)
	var res struct {
		OK     bool `json:"ok"`
		Result struct {
			Cats, Dogs int
			First      string
			Missing    string
		} `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.OK || res.Result.Cats != 2 || res.Result.Dogs != 1 || res.Result.First != "pet1" {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(res.Result.Missing, "E_TOOL_FAILED") || !strings.Contains(res.Result.Missing, "404") {
		t.Errorf("a 404: %q", res.Result.Missing)
	}
	seen := store.seen()
	if len(seen) < 4 {
		t.Errorf("the API saw %d requests, want 4", len(seen))
	}
	for _, a := range seen {
		if a != "Bearer "+petsToken {
			t.Errorf("the API saw Authorization %q", a)
		}
	}
	a, _ := os.ReadFile(audit)
	if len(a) == 0 {
		t.Error("no audit records")
	}
	for what, s := range map[string]string{"stdout": out, "stderr": errOut, "audit": string(a)} {
		if strings.Contains(s, petsToken) {
			t.Errorf("the token reached the %s", what)
		}
	}
}

// TestOpenAPISpecErrorLocated: a spec with an error is named, with its
// place, by tools list and tools lint; the other tools stay.
func TestOpenAPISpecErrorLocated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "openapi", "broken.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "broken.yaml", string(b))
	cfg := writeFile(t, dir, "operator.yaml", "version: 1\nopenapi:\n  - {name: things, spec: broken.yaml, base_url: http://127.0.0.1:9}\n")
	for _, cmd := range [][]string{{"tools", "list", "--demo", "--config", cfg}, {"tools", "lint", "--demo", "--config", cfg}} {
		out, errOut, _ := sandcallIn(t, dir, nil, cmd...)
		all := out + errOut
		if !strings.Contains(all, "things") || !strings.Contains(all, "broken.yaml:") {
			t.Errorf("%v: the spec's error and place are not named:\n%s", cmd, all)
		}
		if cmd[1] == "list" && !strings.Contains(out, "get_expenses") {
			t.Errorf("%v: the other tools are gone:\n%s", cmd, all)
		}
	}
}

// TestOpenAPISlowSpecDoesNotDelayServe: a spec behind a URL that does not
// answer delays neither initialize nor tools/list; a call to one of its
// tools says the source is still loading.
func TestOpenAPISlowSpecDoesNotDelayServe(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hung.Close()
	defer close(release)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "operator.yaml", fmt.Sprintf("version: 1\nopenapi:\n  - {name: slow, spec: %s/spec.yaml, spec_timeout: 10m}\n", hung.URL))
	ctx, cs, stderr := stdioSessionIn(t, dir, "serve", "--demo", "--isolation", "inprocess", "--timeout", "30s", "--config", cfg)
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, stderr.String())
	}
	if len(lt.Tools) == 0 {
		t.Fatal("tools/list is empty")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code":       `try { await tools.call("slow_anything", {}); return "called"; } catch (e) { return e.code + ": " + e.message; }`,
		"timeout_ms": 20000}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `still loading`) {
		t.Errorf("a call while the spec loads: %s", b)
	}
}

// TestOpenAPIProjectSourceNeedsTrust: a project's sandcall.yaml naming an
// OpenAPI source (a host of its choosing, a secret from the environment)
// is ignored, with a warning, until a person trusts it.
func TestOpenAPIProjectSourceNeedsTrust(t *testing.T) {
	t.Parallel()
	store := &petStore{}
	srv := httptest.NewServer(store)
	defer srv.Close()
	dir := t.TempDir()
	cfg := petConfig(t, dir, srv.URL)
	b, _ := os.ReadFile(cfg)
	writeFile(t, dir, "sandcall.yaml", string(b))
	env := []string{"PETS_TOKEN=" + petsToken}
	out, errOut, _ := sandcallIn(t, dir, env, "tools", "list")
	if strings.Contains(out, "pets_list_pets") || !strings.Contains(errOut, "openapi") {
		t.Fatalf("an untrusted project's openapi: source is used, or not named:\n%s%s", out, errOut)
	}
	if n := len(store.seen()); n != 0 {
		t.Errorf("the API saw %d requests before trust", n)
	}
	if out, errOut, code := sandcallIn(t, dir, env, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, _ = sandcallIn(t, dir, env, "tools", "list")
	if !strings.Contains(out, "pets_list_pets") {
		t.Errorf("after trust, no pets tools:\n%s%s", out, errOut)
	}
}

// TestOpenAPIGitHubWithPrism: GitHub's own description from npm, served
// by a real mock server (Prism), through the binary: the operation that
// creates an issue is listed, found and described; a program fans out
// over several operations and returns a compact result; the configured
// token reaches the server (seen by a recording proxy) and never the
// program, an error or the audit.
func TestOpenAPIGitHubWithPrism(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: installs GitHub's description and Prism from npm")
	}
	t.Parallel()
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
	dir := t.TempDir()
	cfg := writeFile(t, dir, "operator.yaml", fmt.Sprintf(`version: 1
openapi:
  - name: github
    spec: %s
    base_url: %s
    auth: {type: bearer, env: GITHUB_TOKEN}
`, spec, proxy.URL))
	env := []string{"GITHUB_TOKEN=" + token}
	out, errOut, code := sandcallIn(t, dir, env, "tools", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "github_issues_create") {
		t.Fatalf("tools list: exit %d\n%.2000s%s", code, out, errOut)
	}
	out, errOut, code = sandcallIn(t, dir, env, "tools", "search", "--config", cfg, "--json", "--limit", "3", "create an issue")
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &found) != nil || !slicesContainsName(found.Tools, "github_issues_create") {
		t.Errorf("tools search \"create an issue\": exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = sandcallIn(t, dir, env, "tools", "describe", "--config", cfg, "github_issues_create")
	if code != 0 || !strings.Contains(out, "github_issues_create(args: {") || !strings.Contains(out, "owner: string;") {
		t.Errorf("tools describe: exit %d\n%s%s", code, out, errOut)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	prog := writeFile(t, dir, "prog.js", `
const [issues, repo, pulls] = await Promise.all([
  tools.github_issues_list_for_repo({owner: "octo", repo: "hello", state: "open", per_page: 5}),
  tools.github_repos_get({owner: "octo", repo: "hello"}),
  tools.github_pulls_list({owner: "octo", repo: "hello"}),
]);
const created = await tools.github_issues_create({owner: "octo", repo: "hello", body: {title: "Found a bug"}});
return {issues: issues.length, repo: repo.full_name, pulls: pulls.length, created: typeof created.number};`)
	out, errOut, code = sandcallIn(t, dir, env, "run", "--config", cfg, "--json", "--audit", audit, prog)
	var res struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.OK || !strings.Contains(string(res.Result), `"created":"number"`) {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if len(res.Result) > 200 {
		t.Errorf("the result is not compact: %d bytes", len(res.Result))
	}
	mu.Lock()
	n := len(auths)
	for _, a := range auths {
		if a != "Bearer "+token {
			t.Errorf("the server saw Authorization %q", a)
		}
	}
	mu.Unlock()
	if n < 4 {
		t.Errorf("the proxy saw %d requests, want 4", n)
	}
	a, _ := os.ReadFile(audit)
	for what, s := range map[string]string{"stdout": out, "stderr": errOut, "audit": string(a)} {
		if strings.Contains(s, token) {
			t.Errorf("the token reached the %s", what)
		}
	}
}

func slicesContainsName(ts []struct{ Name string }, want string) bool {
	for _, t := range ts {
		if t.Name == want {
			return true
		}
	}
	return false
}
