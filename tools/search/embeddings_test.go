package search_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// shopTools are tools a request for what customers bought reaches only
// through "list" and "store": the lexical ranking cannot tell them apart
// by what was bought.
func shopTools() []*tools.Tool {
	return []*tools.Tool{
		{Name: "shop_list_products", Source: "shop", Description: "List the products of the store, with their prices."},
		{Name: "shop_list_orders", Source: "shop", Description: "List the store's orders, newest first."},
		{Name: "shop_list_collections", Source: "shop", Description: "List the collections of products in the store."},
		{Name: "crm_list_contacts", Source: "crm", Description: "List the contacts of the CRM."},
	}
}

// concepts is the test embedder's meaning: words of one sense share a
// dimension. It knows what the lexical ranking does not: buying is
// ordering.
var concepts = map[string]int{
	"bought": 0, "buy": 0, "purchase": 0, "orders": 0, "order": 0,
	"products": 1, "product": 1, "prices": 1,
	"collections": 2, "contacts": 3, "crm": 3,
	"list": 4, "store": 5, "customers": 6,
}

// embedder is an embeddings server of the OpenAI-compatible API, run by
// the test: a text's vector counts its words' senses (see concepts). It
// records what it was asked.
type embedder struct {
	mu     sync.Mutex
	inputs [][]string // each request's inputs
	auth   []string
}

func (e *embedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "not the embeddings API", http.StatusNotFound)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.inputs = append(e.inputs, req.Input)
	e.auth = append(e.auth, r.Header.Get("Authorization"))
	e.mu.Unlock()
	type item struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var data []item
	// In reverse order, to check that the client reads index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float32, 8)
		v[7] = 0.1 // no text is the zero vector
		for _, w := range strings.FieldsFunc(strings.ToLower(req.Input[i]), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if d, ok := concepts[w]; ok {
				v[d]++
			}
		}
		data = append(data, item{Embedding: v, Index: i})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func (e *embedder) requests() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.inputs)
}

const boughtQuery = "list what the customers bought in the store"

func topNames(r search.Result) []string { return hitNames(r.Hits) }

// TestEmbeddingsRerank: with an embeddings server, the tool whose meaning
// fits the request rises to the top; the tools' vectors are asked for once
// and cached; the request is the API's, with the key from the environment.
func TestEmbeddingsRerank(t *testing.T) {
	emb := &embedder{}
	srv := httptest.NewServer(emb)
	defer srv.Close()
	t.Setenv("TEST_EMBED_KEY", "sekret")
	e, err := search.NewEmbeddings(search.EmbeddingsConfig{URL: srv.URL + "/v1", Model: "test-embed", APIKeyEnv: "TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	lexical := search.New(shopTools())
	meaning := search.NewWith(shopTools(), search.Options{Reranker: e})
	plain := lexical.Search(bg, boughtQuery, 3, nil)
	if len(plain.Hits) < 3 || plain.Hits[0].Tool.Name == "shop_list_orders" {
		t.Fatalf("the lexical ranking already puts shop_list_orders first (%v): the case tests nothing", topNames(plain))
	}
	got := meaning.Search(bg, boughtQuery, 3, nil)
	if len(got.Hits) == 0 || got.Hits[0].Tool.Name != "shop_list_orders" {
		t.Fatalf("with embeddings: %v, want shop_list_orders first (lexical: %v)", topNames(got), topNames(plain))
	}
	// The same tools, the same confidence each; only the order moved.
	if !sameSet(topNames(got), topNames(plain)) || got.Confident != plain.Confident || got.Total != plain.Total {
		t.Errorf("with embeddings %v (confident %v, total %d), lexical %v (%v, %d): want the same tools reordered",
			topNames(got), got.Confident, got.Total, topNames(plain), plain.Confident, plain.Total)
	}
	for _, h := range got.Hits {
		for _, p := range plain.Hits {
			if h.Tool == p.Tool && h.Confidence != p.Confidence {
				t.Errorf("%s: confidence %.3f with embeddings, %.3f without", h.Tool.Name, h.Confidence, p.Confidence)
			}
		}
	}
	reqs := emb.requests()
	if len(reqs) != 1 || reqs[0][0] != boughtQuery || len(reqs[0]) < 4 {
		t.Fatalf("requests %q: want one, the query then the tools' texts", reqs)
	}
	if emb.auth[0] != "Bearer sekret" {
		t.Errorf("Authorization %q, want the key of TEST_EMBED_KEY", emb.auth[0])
	}
	// The tools' vectors are cached: a second search asks only for its
	// query's.
	meaning.Search(bg, "list the store's products", 3, nil)
	if reqs := emb.requests(); len(reqs) != 2 || len(reqs[1]) != 1 {
		t.Errorf("second search asked for %q, want the query alone", reqs[len(reqs)-1])
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestEmbeddingsFailOpen: whatever goes wrong with the embeddings server —
// an error status, an answer that is not the API's, vectors that do not
// fit, a server that never answers — the search answers with the lexical
// ranking, in the time the config allows.
func TestEmbeddingsFailOpen(t *testing.T) {
	lexical := search.New(shopTools()).Search(bg, boughtQuery, 3, nil)
	for _, c := range []struct {
		name    string
		handler func(hang <-chan struct{}) http.HandlerFunc
	}{
		{"status 500", func(<-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }
		}},
		{"not json", func(<-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>hello</html>")) }
		}},
		{"too few vectors", func(<-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"data":[{"embedding":[1,0],"index":0}]}`))
			}
		}},
		{"dimensions differ", func(<-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				var req struct{ Input []string }
				_ = json.NewDecoder(r.Body).Decode(&req)
				var data []map[string]any
				for i := range req.Input {
					data = append(data, map[string]any{"embedding": make([]float32, 2+i), "index": i})
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
			}
		}},
		{"never answers", func(hang <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-hang:
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hang := make(chan struct{})
			srv := httptest.NewServer(c.handler(hang))
			// Cleanups run last first: a hung handler is let go, then the
			// server closes (Close waits for its handlers).
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(hang) })
			var logged bytes.Buffer
			e, err := search.NewEmbeddings(search.EmbeddingsConfig{URL: srv.URL + "/v1/embeddings", Model: "m", Timeout: 100 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got := search.NewWith(shopTools(), search.Options{Reranker: e}).Search(bg, boughtQuery, 3, nil)
			t.Logf("answered after %v", time.Since(start).Round(time.Millisecond))
			if !slices.Equal(topNames(got), topNames(lexical)) || got.Confident != lexical.Confident {
				t.Errorf("%v, want the lexical ranking %v", topNames(got), topNames(lexical))
			}
			if !strings.Contains(logged.String(), "the lexical ranking stands") {
				t.Errorf("the failure was not logged: %q", logged.String())
			}
		})
	}
}

// TestEmbeddingsConfig: a config that cannot work is an error that says
// why; Config loads the word files and the reranker it names.
func TestEmbeddingsConfig(t *testing.T) {
	t.Setenv("TEST_EMBED_EMPTY", "")
	for _, c := range []struct {
		cfg  search.EmbeddingsConfig
		want string
	}{
		{search.EmbeddingsConfig{URL: "localhost:8080", Model: "m"}, "not an http(s) URL"},
		{search.EmbeddingsConfig{URL: "http://localhost:8080/v1"}, "no model"},
		{search.EmbeddingsConfig{URL: "http://localhost:8080/v1", Model: "m", APIKeyEnv: "TEST_EMBED_EMPTY"}, "TEST_EMBED_EMPTY"},
		{search.EmbeddingsConfig{URL: "http://localhost:8080/v1", Model: "m", Weight: 2}, "weight"},
	} {
		if _, err := search.NewEmbeddings(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", c.cfg, err, c.want)
		}
	}
	if o, err := (search.Config{}).Options(); err != nil || o.Lexicon != nil || o.Reranker != nil {
		t.Errorf("the zero Config: %+v, %v; want the built-in ranking", o, err)
	}
	p := filepath.Join(t.TempDir(), "words.txt")
	if err := os.WriteFile(p, []byte("[synonyms]\nword: encounter visit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := search.Config{WordFiles: []string{p}, Embeddings: search.EmbeddingsConfig{URL: "http://localhost:1/v1", Model: "m"}}.Options()
	if err != nil || o.Lexicon == nil || o.Reranker == nil {
		t.Errorf("Config with a word file and embeddings: %+v, %v", o, err)
	}
	if _, err := (search.Config{WordFiles: []string{filepath.Join(t.TempDir(), "absent.txt")}}).Options(); err == nil {
		t.Error("a word file that is not there: no error")
	}
}

// TestEmbeddingsConcurrent: searches share one reranker and its cache.
func TestEmbeddingsConcurrent(t *testing.T) {
	srv := httptest.NewServer(&embedder{})
	defer srv.Close()
	e, err := search.NewEmbeddings(search.EmbeddingsConfig{URL: srv.URL + "/v1", Model: "test-embed"})
	if err != nil {
		t.Fatal(err)
	}
	ix := search.NewWith(shopTools(), search.Options{Reranker: e})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := ix.Search(bg, boughtQuery, 3, nil); len(r.Hits) == 0 || r.Hits[0].Tool.Name != "shop_list_orders" {
				t.Errorf("%v, want shop_list_orders first", topNames(r))
			}
		}()
	}
	wg.Wait()
}
