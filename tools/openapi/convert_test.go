package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

// load loads a testdata spec as source "pets", failing the test on error.
func load(t *testing.T, cfg Config) *Source {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "pets"
	}
	s, err := Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func byName(t *testing.T, s *Source) map[string]*tools.Tool {
	t.Helper()
	m := map[string]*tools.Tool{}
	for _, tl := range s.Tools() {
		m[tl.Name] = tl
	}
	return m
}

func schemaJSON(t *testing.T, s *jsonschema.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %s in\n%s", what, w, got)
		}
	}
}

func TestOpenAPI30(t *testing.T) {
	s := load(t, Config{Spec: "testdata/petstore30.yaml"})
	if s.BaseURL() != "https://eu.pets.example/v1" {
		t.Errorf("base URL = %q, want the first server with its variable's default", s.BaseURL())
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name)
	}
	want := []string{"pets_list_pets", "pets_create_pet", "pets_get_pet", "pets_replace_pet", "pets_delete_pet",
		"pets_post_pets_pet_id_photo", "pets_search_pets_by_body"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	m := byName(t, s)
	list := m["pets_list_pets"]
	if list.Pos != "testdata/petstore30.yaml:12" || list.Source != "pets" || list.SourceName != "listPets" {
		t.Errorf("pos, source, source name = %q %q %q", list.Pos, list.Source, list.SourceName)
	}
	if list.Description != "List the pets in the store.\n\nReturns the pets, oldest first. See the guide for paging.\n\nA second paragraph that explains more.\n\n(GET /pets)" {
		t.Errorf("description = %q", list.Description)
	}
	in := schemaJSON(t, list.InputSchema)
	mustContain(t, "list input", in,
		`"limit":{"type":"integer","description":"How many pets to return at most.","default":20,"minimum":1,"exclusiveMaximum":100}`,
		`"tags":{"type":"array","items":{"type":"string"}}`, `"X-Request-Id":{"type":"string"}`, `"additionalProperties":false`)
	if got := list.InputSchema.PropertyOrder; !slices.Equal(got, []string{"limit", "tags", "X-Request-Id"}) {
		t.Errorf("property order = %v", got)
	}
	out := schemaJSON(t, list.OutputSchema)
	mustContain(t, "list output", out, `"items":{"$ref":"#/$defs/Pet"}`, `"Owner":`, `"NewPet":`,
		`"tag":{"type":["string","null"]}`, `"kind":{"type":["string","null"],"enum":["cat","dog",null]}`,
		`"examples":[7]`)
	if strings.Contains(out, "pattern") {
		t.Errorf("a pattern RE2 cannot compile was kept: %s", out)
	}
	// The referenced schemas are converted once and shared.
	if m["pets_get_pet"].OutputSchema.Defs["Pet"] != list.OutputSchema.Defs["Pet"] {
		t.Error("the Pet schema is not shared between tools")
	}
	create := m["pets_create_pet"]
	mustContain(t, "create input", schemaJSON(t, create.InputSchema), `"body":{"$ref":"#/$defs/NewPet"}`, `"required":["body"]`)
	get := m["pets_get_pet"]
	mustContain(t, "get input", schemaJSON(t, get.InputSchema), `"petId":{"type":"string","description":"The pet's id."}`, `"required":["petId"]`)
	// A parameter called body is renamed <in>_body; the body keeps "body".
	mustContain(t, "search input", schemaJSON(t, m["pets_search_pets_by_body"].InputSchema), `"query_body":{"type":"string"}`, `"body":true`)
	photo := m["pets_post_pets_pet_id_photo"]
	mustContain(t, "photo input", schemaJSON(t, photo.InputSchema), `"body":{"type":"string","description":"The request body, sent as image/png."}`)
	mustContain(t, "photo output", schemaJSON(t, photo.OutputSchema), `"const":"text"`)

	effects := map[string]tools.Effects{
		"pets_list_pets":              {ReadOnly: true, Idempotent: true},
		"pets_create_pet":             {},
		"pets_replace_pet":            {Idempotent: true},
		"pets_delete_pet":             {Destructive: true, Idempotent: true},
		"pets_post_pets_pet_id_photo": {Idempotent: true}, // x-idempotent: true
	}
	for n, e := range effects {
		e.OpenWorld, e.Declared = true, true
		if got := m[n].Effects; got != e {
			t.Errorf("%s: effects %+v, want %+v", n, got, e)
		}
	}

	// Every tool goes into a catalog (its schema compiles) and renders as
	// TypeScript.
	if _, err := tools.NewCatalog(s.Tools()...); err != nil {
		t.Fatal(err)
	}
	decl := tsdecl.Declaration(create)
	mustContain(t, "declaration", decl, "pets_create_pet(args: {", "body: {", "name: string;", `kind?: "cat" | "dog" | null;`)
}

func TestOpenAPI31(t *testing.T) {
	_, err := Load(context.Background(), Config{Name: "pets", Spec: "testdata/petstore31.json"})
	var e *Error
	if !errors.As(err, &e) || e.Source != "pets" || !strings.Contains(err.Error(), "names no server: set base_url") {
		t.Fatalf("a spec without servers and no base_url: %v", err)
	}
	s := load(t, Config{Spec: "testdata/petstore31.json", BaseURL: "http://127.0.0.1:1/api/"})
	m := byName(t, s)
	get := m["pets_get_pet"]
	mustContain(t, "get input", schemaJSON(t, get.InputSchema), `"petId":{"type":"integer"}`, `"fields":{"type":"array"`,
		`"filter":{"type":"object","properties":{"color":{"type":"string"}}}`)
	mustContain(t, "get output", schemaJSON(t, get.OutputSchema), `"id":{"type":"integer","exclusiveMinimum":0}`,
		`"nickname":{"type":["string","null"]}`, `"status":{"const":"available"}`)
	if get.Pos != "testdata/petstore31.json:6" {
		t.Errorf("pos = %q (a JSON spec's lines count too)", get.Pos)
	}
	create := m["pets_create_pet"]
	mustContain(t, "form input", schemaJSON(t, create.InputSchema), `"age":{"type":["integer","null"]}`)
	if create.Description != "Adds a pet.\n\n(POST /pets)" {
		t.Errorf("description = %q", create.Description)
	}
}

func TestSwagger20(t *testing.T) {
	s := load(t, Config{Spec: "testdata/petstore20.yaml"})
	if s.BaseURL() != "https://pets.example/v2" {
		t.Errorf("base URL = %q, want https (listed) host and basePath", s.BaseURL())
	}
	m := byName(t, s)
	find := m["pets_find_pets"]
	mustContain(t, "find input", schemaJSON(t, find.InputSchema),
		`"status":{"type":"array","items":{"type":"string","enum":["available","sold"]}}`,
		`"limit":{"type":"integer","exclusiveMaximum":50}`, `"required":["status"]`)
	mustContain(t, "find output", schemaJSON(t, find.OutputSchema), `"tag":{"type":["string","null"]}`, `"examples":["doggie"]`)
	mustContain(t, "add input", schemaJSON(t, m["pets_add_pet"].InputSchema), `"body":{"$ref":"#/$defs/Pet"}`, `"required":["body"]`)
	mustContain(t, "form input", schemaJSON(t, m["pets_update_pet_with_form"].InputSchema),
		`"petId":{"type":"integer"}`, `"body":{"type":"object","properties":{"name":{"type":"string"},"status":{"type":"string"}}`,
		`"required":["name"]`)
	if _, err := tools.NewCatalog(s.Tools()...); err != nil {
		t.Fatal(err)
	}
}

// A spec with an error gives an error naming the source and the line.
func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		spec string
		want string
	}{
		{"testdata/broken.yaml", `openapi source "pets": testdata/broken.yaml:12: component ` + "`#/components/parameters/Missing`" + ` does not exist`},
		{"testdata/badsyntax.yaml", `openapi source "pets": testdata/badsyntax.yaml:8: not a readable OpenAPI description: did not find expected ',' or '}'`},
		{"testdata/missing.yaml", `openapi source "pets": spec testdata/missing.yaml: no such file or directory`},
		{"testdata", `openapi source "pets": spec testdata: not a regular file`},
		{write("hello.yaml", "hello: world\n"), `it has no "openapi: 3.x" or "swagger: 2.0" field`},
		{write("v2.yaml", "openapi: 2.5.0\ninfo: {title: x, version: '1'}\npaths: {}\n"), `or unknown version`},
		{write("paths.yaml", "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: 'https://x.example'}]\npaths:\n  /a:\n    get: hello\n"), `paths.yaml:6: GET /a: want an operation (a mapping)`},
		{write("rel.yaml", "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: '/v1'}]\npaths: {}\n"), `the spec's server URL "/v1" is relative and the spec is a file: set base_url`},
	} {
		_, err := Load(context.Background(), Config{Name: "pets", Spec: c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v\nwant it to contain %q", c.spec, err, c.want)
		}
		var e *Error
		if !errors.As(err, &e) || e.Source != "pets" {
			t.Errorf("%s: %T is not an *Error naming the source", c.spec, err)
		}
	}
}

func TestLintFindings(t *testing.T) {
	s := load(t, Config{Spec: "testdata/petstore30.yaml"})
	var got []string
	for _, f := range s.Findings() {
		got = append(got, f.String())
	}
	want := []string{
		"testdata/petstore30.yaml:89: warning: pets_post_pets_pet_id_photo: POST /pets/{petId}/photo has no operationId: the tool is named pets_post_pets_pet_id_photo after its method and path [openapi-operation-id]",
		"testdata/petstore30.yaml:108: warning: pets_search_pets_by_body: POST /search has neither a summary nor a description [openapi-description]",
		"testdata/petstore30.yaml:114: warning: pets_search_pets_by_body: POST /search: the request body has no schema [openapi-body-type]",
		`testdata/petstore30.yaml:128: warning: pets: pattern "^(?!x)[a-z]+$" is not a Go (RE2) regular expression: not checked [openapi-pattern]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range s.Findings() {
		if f.Hint == "" {
			t.Errorf("%s: no hint", f)
		}
	}
}

func TestSelect(t *testing.T) {
	for _, c := range []struct {
		include, exclude []string
		want             []string
	}{
		{[]string{"tag:pets"}, nil, []string{"pets_list_pets", "pets_create_pet", "pets_get_pet"}},
		{[]string{"/pets/*"}, []string{"DELETE /pets/*"}, []string{"pets_get_pet", "pets_replace_pet"}},
		{[]string{"/pets/**"}, []string{"tag:pets", "replace*"}, []string{"pets_delete_pet", "pets_post_pets_pet_id_photo"}},
		{[]string{"get*", "search-*"}, nil, []string{"pets_get_pet", "pets_search_pets_by_body"}},
		{[]string{"POST /**"}, nil, []string{"pets_create_pet", "pets_post_pets_pet_id_photo", "pets_search_pets_by_body"}},
	} {
		s := load(t, Config{Spec: "testdata/petstore30.yaml", Include: c.include, Exclude: c.exclude})
		var got []string
		for _, tl := range s.Tools() {
			got = append(got, tl.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("include %v exclude %v: %v, want %v", c.include, c.exclude, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"listPets":              "list_pets",
		"getHTTPStatus":         "get_http_status",
		"issues/create":         "issues_create",
		"repos/get-content":     "repos_get_content",
		"GetV2Users":            "get_v2_users",
		"  weird..name__here  ": "weird_name_here",
		"Ünïcode":               "n_code",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
	b := newBuilder(&Config{Name: "github"}, nil, "spec")
	long := &operation{method: "GET", path: "/a", id: "actions/list-self-hosted-runner-groups-for-an-enterprise-with-a-very-long-id"}
	n1 := b.name(long)
	if _, err := tools.NewCatalog(&tools.Tool{Name: n1, Handler: nopHandler}); len(n1) != 64 || err != nil {
		t.Errorf("long name %q (%d): want 64 characters and a valid name", n1, len(n1))
	}
	n2 := b.name(&operation{method: "GET", path: "/b", id: "github/issues-create"})
	n3 := b.name(&operation{method: "GET", path: "/c", id: "issues.create"})
	n4 := b.name(&operation{method: "GET", path: "/d", id: "7up"})
	if n2 != "github_issues_create" || n3 == n2 || !strings.HasPrefix(n3, "github_issues_create_") || n4 != "github_op_7up" {
		t.Errorf("names %q %q %q: want the source prefix dropped once, a clash made unique, a digit start fixed", n2, n3, n4)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Name: "gh", Spec: "spec.json"}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Name = "GitHub" }, `name "GitHub": want a lower-case letter`},
		{func(c *Config) { c.Spec = "" }, "spec: missing"},
		{func(c *Config) { c.Spec = "ftp://x/spec" }, ""},
		{func(c *Config) { c.BaseURL = "api.github.com" }, "base_url: api.github.com: want an absolute http:// or https:// URL"},
		{func(c *Config) { c.BaseURL = "https://u:p@api.example" }, "base_url: https://api.example: credentials in the URL: put them in auth"},
		{func(c *Config) { c.Auth = Auth{Type: "oauth"} }, `auth: type "oauth"`},
		{func(c *Config) { c.Auth = Auth{Type: "bearer"} }, "give exactly one of env"},
		{func(c *Config) { c.Auth = Auth{Type: "bearer", Env: "A", File: "b"} }, "give exactly one of env"},
		{func(c *Config) { c.Auth = Auth{Type: "api_key", Env: "K"} }, "api_key: give exactly one of header and query"},
		{func(c *Config) { c.Auth = Auth{Type: "api_key", Env: "K", Header: "X Key"} }, `header "X Key" is not a valid header name`},
		{func(c *Config) { c.Auth = Auth{Type: "bearer", Env: "K", Query: "k"} }, "header and query are for api_key"},
		{func(c *Config) { c.Auth = Auth{Env: "K"} }, "type is empty but other fields are set"},
		{func(c *Config) { c.Include = []string{"tag:"} }, `include: "tag:": empty tag`},
		{func(c *Config) { c.Exclude = []string{"FETCH /a"} }, `exclude: "FETCH /a": "FETCH" is not an HTTP method`},
		{func(c *Config) { c.Exclude = []string{"/a/[b"} }, "bad glob"},
		{func(c *Config) { c.Retries = -1 }, "retries: negative"},
	} {
		cfg := ok
		c.mod(&cfg)
		err := cfg.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v (a spec that is not http(s) is a file path)", cfg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", cfg, err, c.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func nopHandler(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }

// Recursive schemas load (libopenapi's circular-reference check is off: a
// $def may refer to itself); a $ref that leads back to itself with no
// schema in between accepts anything, and says so.
func TestRecursive(t *testing.T) {
	s := load(t, Config{Spec: "testdata/recursive.yaml"})
	get := byName(t, s)["pets_get_node"]
	mustContain(t, "recursive output", schemaJSON(t, get.OutputSchema),
		`"$ref":"#/$defs/Node"`, `"child":{"$ref":"#/$defs/Node"}`)
	loop := filepath.Join(t.TempDir(), "loop.yaml")
	os.WriteFile(loop, []byte(`openapi: 3.0.0
info: {title: r, version: '1'}
servers: [{url: 'https://r.example'}]
paths:
  /a:
    get:
      operationId: getA
      parameters:
        - {name: q, in: query, schema: {$ref: '#/components/schemas/A'}}
      responses: {'200': {description: ok}}
components:
  schemas:
    A: {$ref: '#/components/schemas/B'}
    B: {$ref: '#/components/schemas/A'}
`), 0o644)
	s = load(t, Config{Spec: loop})
	if _, err := tools.NewCatalog(s.Tools()...); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range s.Findings() {
		found = found || f.Rule == "openapi-ref" && strings.Contains(f.String(), "loop.yaml:13: warning: pets: $ref A leads back to itself")
	}
	if !found {
		t.Errorf("findings %v: want the loop reported at its line", s.Findings())
	}
}
