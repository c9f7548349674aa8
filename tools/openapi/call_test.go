package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

const secret = "s3cr3t-T0ken-value-9f8e7d"

// seen is what a test server saw of one request.
type seen struct {
	method, path, rawQuery, body string
	header                       http.Header
}

// recorder is a test API: it records each request and answers with
// answer (or 200 {"ok":true}).
type recorder struct {
	mu     sync.Mutex
	reqs   []seen
	answer func(w http.ResponseWriter, r *http.Request, n int)
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(b), r.Header.Clone()})
	n := len(rc.reqs)
	rc.mu.Unlock()
	if rc.answer != nil {
		rc.answer(w, r, n)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
}

func (rc *recorder) last(t *testing.T) seen {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reqs) == 0 {
		t.Fatal("the server saw no request")
	}
	return rc.reqs[len(rc.reqs)-1]
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

// serve starts rc and loads the spec with its base URL pointing at it.
func serve(t *testing.T, rc *recorder, cfg Config) (*Source, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	if cfg.Spec == "" {
		cfg.Spec = "testdata/petstore30.yaml"
	}
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = func(k string) (string, bool) { return secret, k == "PETS_TOKEN" }
	}
	return load(t, cfg), srv
}

// call calls a tool of s by name, validating its arguments first.
func call(t *testing.T, s *Source, name, args string) (json.RawMessage, error) {
	t.Helper()
	tl := byName(t, s)[name]
	if tl == nil {
		t.Fatalf("no tool %s", name)
	}
	if _, err := tools.NewCatalog(tl); err != nil {
		t.Fatal(err)
	}
	return tl.Call(context.Background(), json.RawMessage(args))
}

// captureLogs sends slog's default logger, at debug level, to a buffer
// for the test.
func captureLogs(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func noSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte("bob:" + secret))} {
		if strings.Contains(text, form) {
			t.Errorf("%s carries the secret: %s", what, text)
		}
	}
}

func TestAuth(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "token")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		auth  Auth
		check func(seen) bool
	}{
		{Auth{Type: AuthBearer, Env: "PETS_TOKEN"}, func(s seen) bool { return s.header.Get("Authorization") == "Bearer "+secret }},
		{Auth{Type: AuthBearer, File: secretFile}, func(s seen) bool { return s.header.Get("Authorization") == "Bearer "+secret }},
		{Auth{Type: AuthBasic, Env: "PETS_TOKEN", Username: "bob"}, func(s seen) bool {
			return s.header.Get("Authorization") == "Basic "+base64.StdEncoding.EncodeToString([]byte("bob:"+secret))
		}},
		{Auth{Type: AuthAPIKey, Env: "PETS_TOKEN", Header: "X-Api-Key"}, func(s seen) bool { return s.header.Get("X-Api-Key") == secret }},
		{Auth{Type: AuthAPIKey, Env: "PETS_TOKEN", Query: "api_key"}, func(s seen) bool {
			return strings.Contains(s.rawQuery, "api_key="+secret) && strings.Contains(s.rawQuery, "limit=5")
		}},
	} {
		logs := captureLogs(t)
		rc := &recorder{}
		s, _ := serve(t, rc, Config{Auth: c.auth})
		res, err := call(t, s, "pets_list_pets", `{"limit":5}`)
		if err != nil || string(res) != `{"ok":true}` {
			t.Fatalf("%+v: %s, %v", c.auth, res, err)
		}
		if got := rc.last(t); !c.check(got) {
			t.Errorf("%+v: the server saw headers %v, query %q", c.auth, got.header, got.rawQuery)
		}
		for _, tl := range s.Tools() {
			noSecret(t, "a tool's description", tl.Description)
		}
		noSecret(t, "the logs", logs.String())
	}
	// A missing variable or secret file names it, never a value.
	_, err := Load(context.Background(), Config{Name: "pets", Spec: "testdata/petstore30.yaml",
		Auth: Auth{Type: AuthBearer, Env: "NOPE"}, LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "environment variable NOPE is not set or empty") {
		t.Errorf("missing variable: %v", err)
	}
	_, err = Load(context.Background(), Config{Name: "pets", Spec: "testdata/petstore30.yaml",
		Auth: Auth{Type: AuthBearer, File: filepath.Join(dir, "nope")}})
	if err == nil || !strings.Contains(err.Error(), "secret file") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing secret file: %v", err)
	}
}

// The API echoes the credentials back, in its answer and in an error: the
// secret reaches neither a result nor an error.
func TestSecretNeverReturned(t *testing.T) {
	logs := captureLogs(t)
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "DELETE" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"message":"token %s (%s) may not delete"}`, r.Header.Get("Authorization"), r.URL.RawQuery)
			return
		}
		fmt.Fprintf(w, `{"auth":%q,"query":%q}`, r.Header.Get("Authorization"), r.URL.RawQuery)
	}}
	for _, auth := range []Auth{{Type: AuthBearer, Env: "PETS_TOKEN"}, {Type: AuthAPIKey, Env: "PETS_TOKEN", Query: "key"}} {
		s, _ := serve(t, rc, Config{Auth: auth})
		res, err := call(t, s, "pets_get_pet", `{"petId":"1"}`)
		if err != nil {
			t.Fatal(err)
		}
		noSecret(t, "a result", string(res))
		if !strings.Contains(string(res), tools.Redacted) {
			t.Errorf("result %s: want the echoed secret redacted", res)
		}
		_, err = call(t, s, "pets_delete_pet", `{"petId":"1"}`)
		if err == nil {
			t.Fatal("403: no error")
		}
		noSecret(t, "an error", err.Error())
		var se *sandbox.Error
		if !errors.As(err, &se) || se.Code != sandbox.EToolFailed || !strings.Contains(se.Message, "HTTP 403 Forbidden") {
			t.Errorf("403: %v", err)
		}
	}
	noSecret(t, "the logs", logs.String())
}

func TestRequestEncoding(t *testing.T) {
	rc := &recorder{}
	s, _ := serve(t, rc, Config{})
	if _, err := call(t, s, "pets_list_pets", `{"limit":5,"tags":["a b","c&d"],"X-Request-Id":"r-1"}`); err != nil {
		t.Fatal(err)
	}
	got := rc.last(t)
	if got.method != "GET" || got.path != "/v1/pets" || got.rawQuery != "limit=5&tags=a+b&tags=c%26d" || got.header.Get("X-Request-Id") != "r-1" {
		t.Errorf("list: %s %s ?%s %v", got.method, got.path, got.rawQuery, got.header)
	}
	if _, err := call(t, s, "pets_get_pet", `{"petId":"a/b c"}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.path != "/v1/pets/a%2Fb%20c" {
		t.Errorf("path parameter: %s, want it escaped as one segment", got.path)
	}
	_, err := call(t, s, "pets_get_pet", `{"petId":".."}`)
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.EToolArgs || se.Path != "/petId" {
		t.Errorf(`petId "..": %v`, err)
	}
	if _, err := call(t, s, "pets_create_pet", `{"body":{"name":"Rex","kind":"dog"}}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.method != "POST" || got.body != `{"name":"Rex","kind":"dog"}` || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("create: %s %q %v", got.method, got.body, got.header)
	}
	if _, err := call(t, s, "pets_post_pets_pet_id_photo", `{"petId":"7","body":"PNGDATA"}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.body != "PNGDATA" || got.header.Get("Content-Type") != "image/png" || got.header.Get("Accept") != "text/html" {
		t.Errorf("photo: %q %v", got.body, got.header)
	}
	// An argument the schema does not have is refused before any request.
	n := rc.count()
	if _, err := call(t, s, "pets_get_pet", `{"petId":"1","color":"red"}`); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("unknown argument: %v", err)
	}
	if rc.count() != n {
		t.Error("a request was sent for invalid arguments")
	}

	s31, _ := serve(t, rc, Config{Spec: "testdata/petstore31.json"})
	if _, err := call(t, s31, "pets_get_pet", `{"petId":7,"fields":["a","b"],"filter":{"color":"red"}}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.path != "/v1/pets/7" || got.rawQuery != "fields=a%2Cb&filter%5Bcolor%5D=red" {
		t.Errorf("3.1 get: %s ?%s", got.path, got.rawQuery)
	}
	if _, err := call(t, s31, "pets_create_pet", `{"body":{"name":"Rex","age":3}}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.body != "age=3&name=Rex" || got.header.Get("Content-Type") != formURLEncoded {
		t.Errorf("form body: %q %v", got.body, got.header.Get("Content-Type"))
	}
	s20, _ := serve(t, rc, Config{Spec: "testdata/petstore20.yaml"})
	if _, err := call(t, s20, "pets_find_pets", `{"status":["available","sold"]}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.path != "/v1/pets" || got.rawQuery != "status=available%2Csold" {
		t.Errorf("2.0 csv: %s ?%s", got.path, got.rawQuery)
	}
	if _, err := call(t, s20, "pets_update_pet_with_form", `{"petId":3,"body":{"name":"Rex"}}`); err != nil {
		t.Fatal(err)
	}
	if got := rc.last(t); got.path != "/v1/pets/3/form" || got.body != "name=Rex" {
		t.Errorf("2.0 form: %s %q", got.path, got.body)
	}
}

func TestResults(t *testing.T) {
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Query().Get("limit") {
		case "1":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, "[ {\"id\": 1,\n \"name\": \"Rex\"} ]\n")
		case "2":
			w.WriteHeader(http.StatusNoContent)
		case "3":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello")
		case "4":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe})
		case "5":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{\"name\": \"R\xffx\"}"))
		}
	}}
	s, _ := serve(t, rc, Config{})
	for limit, want := range map[int]string{
		1: `[{"id":1,"name":"Rex"}]`,
		2: `null`,
		3: `{"type":"text","text":"hello","mimeType":"text/plain"}`,
		4: `{"type":"text","text":"(binary content: 7 bytes of image/png, not shown)","mimeType":"image/png"}`,
		5: `{"name":"R` + "\uFFFD" + `x"}`, // not UTF-8: as JSON.parse reads it
	} {
		res, err := call(t, s, "pets_list_pets", fmt.Sprintf(`{"limit":%d}`, limit))
		if err != nil || string(res) != want {
			t.Errorf("limit %d: %s, %v; want %s", limit, res, err, want)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Query().Get("limit") {
		case "1":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.example/x"}`)
		case "2":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"message":"Validation Failed","errors":[{"field":"limit"}]}`)
		case "3":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "<html><body>"+strings.Repeat("Oops! ", 200)+"</body></html>")
		case "4":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case "5":
			w.WriteHeader(http.StatusUnauthorized)
		case "6":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}}
	s, _ := serve(t, rc, Config{})
	for limit, want := range map[int]struct {
		msg, reason string
		retryable   bool
		hint        string
	}{
		1: {"GET /pets: HTTP 404 Not Found: Not Found", sandbox.ReasonUnavailable, false, "No such resource"},
		2: {"GET /pets: HTTP 422 Unprocessable Entity: Validation Failed", "", false, "fix them"},
		3: {"GET /pets: HTTP 500 Internal Server Error: <html><body>Oops! Oops!", "", false, "report it"},
		4: {"GET /pets: HTTP 429 Too Many Requests", sandbox.ReasonTransient, true, "wait 30s"},
		5: {"GET /pets: HTTP 401 Unauthorized", "", false, `credentials of source "pets"`},
		6: {"GET /pets: HTTP 503 Service Unavailable", sandbox.ReasonTransient, true, "try again later"},
	} {
		_, err := call(t, s, "pets_list_pets", fmt.Sprintf(`{"limit":%d}`, limit))
		var se *sandbox.Error
		if !errors.As(err, &se) {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if se.Code != sandbox.EToolFailed || !strings.HasPrefix(se.Message, want.msg) || se.Reason != want.reason ||
			se.Retryable != want.retryable || !strings.Contains(se.Hint, want.hint) || se.Tool != "pets_list_pets" {
			t.Errorf("limit %d: %+v\nwant %+v", limit, se, want)
		}
		if len(se.Message) > 400 {
			t.Errorf("limit %d: message of %d bytes: want a short excerpt", limit, len(se.Message))
		}
	}
}

func TestRetries(t *testing.T) {
	var fails atomic.Int32
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		if fails.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}}
	s, _ := serve(t, rc, Config{Retries: 2})
	// An idempotent GET is sent again after 503s, up to Retries times.
	fails.Store(2)
	if res, err := call(t, s, "pets_list_pets", `{}`); err != nil || string(res) != `{"ok":true}` || rc.count() != 3 {
		t.Errorf("GET after two 503s: %s, %v, %d requests", res, err, rc.count())
	}
	fails.Store(5)
	before := rc.count()
	if _, err := call(t, s, "pets_list_pets", `{}`); !errors.Is(err, sandbox.ErrToolFailed) || rc.count()-before != 3 {
		t.Errorf("GET after five 503s: %v, %d requests (want 3)", err, rc.count()-before)
	}
	// A POST is never sent twice.
	fails.Store(1)
	before = rc.count()
	_, err := call(t, s, "pets_create_pet", `{"body":{"name":"Rex"}}`)
	var se *sandbox.Error
	if !errors.As(err, &se) || !se.Retryable || rc.count()-before != 1 {
		t.Errorf("POST after a 503: %v, %d requests (want 1, and a retryable error)", err, rc.count()-before)
	}
	// Without Retries, nothing is sent twice here (the broker retries).
	s0, _ := serve(t, rc, Config{})
	fails.Store(1)
	before = rc.count()
	if _, err := call(t, s0, "pets_list_pets", `{}`); err == nil || rc.count()-before != 1 {
		t.Errorf("Retries 0: %v, %d requests", err, rc.count()-before)
	}
}

func TestRedirects(t *testing.T) {
	other := &recorder{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/v1/pets/same":
			http.Redirect(w, r, "/v1/pets/moved", http.StatusTemporaryRedirect)
		case "/v1/pets/away":
			http.Redirect(w, r, otherSrv.URL+"/steal", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"at":"`+r.URL.Path+`"}`)
		}
	}}
	s, _ := serve(t, rc, Config{Auth: Auth{Type: AuthBearer, Env: "PETS_TOKEN"}})
	res, err := call(t, s, "pets_get_pet", `{"petId":"same"}`)
	if err != nil || string(res) != `{"at":"/v1/pets/moved"}` || rc.last(t).header.Get("Authorization") != "Bearer "+secret {
		t.Errorf("same-origin redirect: %s, %v (followed, with credentials)", res, err)
	}
	_, err = call(t, s, "pets_get_pet", `{"petId":"away"}`)
	if err == nil || !strings.Contains(err.Error(), "redirected to another origin") || other.count() != 0 {
		t.Errorf("cross-origin redirect: %v; the other origin saw %d requests", err, other.count())
	}
}

func TestResponseCap(t *testing.T) {
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `["`+strings.Repeat("x", 2000)+`"]`)
	}}
	s, _ := serve(t, rc, Config{MaxResponseBytes: 1000})
	_, err := call(t, s, "pets_list_pets", `{}`)
	if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Errorf("answer over the cap: %v", err)
	}
	s2, _ := serve(t, rc, Config{MaxResponseBytes: 2004})
	if res, err := call(t, s2, "pets_list_pets", `{}`); err != nil || len(res) != 2004 {
		t.Errorf("answer at the cap: %d bytes, %v", len(res), err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	rc := &recorder{answer: func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}}
	s, _ := serve(t, rc, Config{Timeout: 50 * time.Millisecond})
	defer close(release)
	_, err := call(t, s, "pets_list_pets", `{}`)
	var se *sandbox.Error
	if !errors.As(err, &se) || !se.Retryable || !strings.Contains(se.Message, "no answer within 50ms") {
		t.Errorf("GET timeout: %v", err)
	}
	_, err = call(t, s, "pets_create_pet", `{"body":{"name":"Rex"}}`)
	if !errors.As(err, &se) || se.Retryable || !strings.Contains(se.Hint, "may or may not have taken effect") {
		t.Errorf("POST timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = byName(t, s)["pets_list_pets"].Handler(ctx, json.RawMessage(`{}`))
	if !errors.Is(err, sandbox.ErrCancelled) {
		t.Errorf("cancelled call: %v", err)
	}
}

// A spec behind a URL that does not answer: Start returns at once, and
// the load fails with an error naming the source and the cause.
func TestStartUnreachable(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hold)
	p := Start(context.Background(), Config{Name: "slow", Spec: srv.URL + "/openapi.json?key=abc", SpecTimeout: 100 * time.Millisecond})
	select {
	case <-p.Done():
		t.Fatal("Start waited for the load")
	default:
	}
	_, err := p.Wait(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Source != "slow" || !strings.Contains(err.Error(), "no answer within 100ms") || strings.Contains(err.Error(), "key=abc") {
		t.Errorf("unreachable spec: %v", err)
	}
	// A refused connection fails at once, naming the URL without its query.
	closed := httptest.NewServer(http.NotFoundHandler())
	u := closed.URL
	closed.Close()
	_, err = Start(context.Background(), Config{Name: "gone", Spec: u + "/spec.yaml"}).Wait(context.Background())
	if err == nil || !strings.Contains(err.Error(), `openapi source "gone": spec `+u+"/spec.yaml") {
		t.Errorf("refused: %v", err)
	}
}

// A spec served by URL with a relative server resolves against it.
func TestSpecURL(t *testing.T) {
	spec := "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: /api/v3}]\npaths:\n  /ping:\n    get:\n      operationId: ping\n      responses: {'200': {description: ok}}\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/specs/openapi.yaml", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, spec) })
	mux.HandleFunc("/api/v3/ping", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `"pong"`) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s, err := Start(context.Background(), Config{Name: "svc", Spec: srv.URL + "/specs/openapi.yaml"}).Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseURL() != srv.URL+"/api/v3" {
		t.Errorf("base URL %q", s.BaseURL())
	}
	cat, _ := tools.NewCatalog()
	if added, errs := s.AddTo(cat); len(added) != 1 || len(errs) != 0 {
		t.Fatalf("AddTo: %v %v", added, errs)
	}
	tl, _ := cat.Lookup("svc_ping")
	if res, err := tl.Call(context.Background(), json.RawMessage(`{}`)); err != nil || string(res) != `{"type":"text","text":"\"pong\"","mimeType":"text/plain"}` {
		t.Errorf("ping: %s %v", res, err)
	}
	if _, errs := s.AddTo(cat); len(errs) != 1 {
		t.Errorf("adding again: %v, want the clash reported", errs)
	}
}
