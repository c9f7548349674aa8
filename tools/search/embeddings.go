package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Embeddings is a Reranker that asks a model of meaning: any server of
// the OpenAI-compatible embeddings API (POST {model, input: [...]} to
// …/v1/embeddings → {data: [{embedding: [...], index}]}; Ollama,
// llama.cpp's server, text-embeddings-inference and OpenAI speak it). It
// embeds the query and each candidate tool's text, and orders the lexical
// ranking's best tools by a blend of their lexical rank and their cosine
// similarity to the query. A tool's vector is cached by its text, so a
// catalog's tools are embedded once. Any error — the server down, slow,
// or answering what is not the API — fails open: the lexical order
// stands. It is safe for concurrent use.
type Embeddings struct {
	cfg    EmbeddingsConfig
	url    string
	key    string
	client *http.Client
	log    *slog.Logger

	mu     sync.Mutex
	cache  map[string][]float32 // a tool's text → its vector
	logged time.Time            // when an error was last logged
}

// EmbeddingsConfig configures Embeddings. Only URL and Model are needed;
// the zero value of the others is a sensible default.
type EmbeddingsConfig struct {
	// URL is the API's base (http://localhost:11434/v1) or the endpoint
	// itself (…/v1/embeddings).
	URL string
	// Model is the embedding model the server is asked for.
	Model string
	// APIKeyEnv names the environment variable that holds the API key,
	// sent as a bearer token; empty: none is sent.
	APIKeyEnv string
	// Timeout bounds the embedding request of one search; past it the
	// lexical order stands. 0: 2 seconds.
	Timeout time.Duration
	// Weight is the share of the cosine similarity in the blend that
	// orders the tools, from 0 (the lexical rank alone) to 1 (the
	// similarity alone); 0: 0.5.
	Weight float64
	// MaxCached bounds the tool vectors kept; 0: 10,000.
	MaxCached int
	// Logger gets the errors that fail open, at most one a minute; nil:
	// slog.Default().
	Logger *slog.Logger
}

// NewEmbeddings returns the Embeddings reranker of c, or an error that
// says what in c is wrong. It does not contact the server.
func NewEmbeddings(c EmbeddingsConfig) (*Embeddings, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search: embeddings: url %q is not an http(s) URL", c.URL)
	}
	if strings.TrimSpace(c.Model) == "" {
		return nil, errors.New("search: embeddings: no model named")
	}
	if c.Weight < 0 || c.Weight > 1 {
		return nil, fmt.Errorf("search: embeddings: weight %g is not between 0 and 1", c.Weight)
	}
	if c.Timeout < 0 || c.MaxCached < 0 {
		return nil, errors.New("search: embeddings: a negative timeout or cache size")
	}
	e := &Embeddings{cfg: c, url: strings.TrimRight(c.URL, "/"), client: &http.Client{}, log: c.Logger, cache: map[string][]float32{}}
	if !strings.HasSuffix(e.url, "/embeddings") {
		e.url += "/embeddings"
	}
	if c.APIKeyEnv != "" {
		e.key = os.Getenv(c.APIKeyEnv)
		if e.key == "" {
			return nil, fmt.Errorf("search: embeddings: the environment variable %s (api key) is empty or unset", c.APIKeyEnv)
		}
	}
	if e.cfg.Timeout == 0 {
		e.cfg.Timeout = 2 * time.Second
	}
	if e.cfg.Weight == 0 {
		e.cfg.Weight = 0.5
	}
	if e.cfg.MaxCached == 0 {
		e.cfg.MaxCached = 10000
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	return e, nil
}

// Rerank implements Reranker: it sets each candidate's Score to the blend
// of its lexical rank (the candidates come best first) and its similarity
// to the query, both as shares of their range.
func (e *Embeddings) Rerank(ctx context.Context, q *Query, cands []Candidate) error {
	if err := e.rerank(ctx, q.Text(), cands); err != nil {
		e.fail(err)
		return err
	}
	return nil
}

func (e *Embeddings) rerank(ctx context.Context, query string, cands []Candidate) error {
	texts := make([]string, len(cands))
	vecs := make([][]float32, len(cands))
	var missing []string
	var at []int
	e.mu.Lock()
	for i, c := range cands {
		texts[i] = toolText(c)
		if v, ok := e.cache[texts[i]]; ok {
			vecs[i] = v
		} else {
			missing = append(missing, texts[i])
			at = append(at, i)
		}
	}
	e.mu.Unlock()
	got, err := e.embed(ctx, append([]string{query}, missing...))
	if err != nil {
		return err
	}
	qv := got[0]
	e.mu.Lock()
	if len(e.cache)+len(missing) > e.cfg.MaxCached {
		clear(e.cache) // a catalog larger than the cache is embedded anew
	}
	for k, i := range at {
		vecs[i] = got[k+1]
		e.cache[texts[i]] = got[k+1]
	}
	e.mu.Unlock()
	sims := make([]float64, len(cands))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range vecs {
		if len(v) != len(qv) {
			return fmt.Errorf("search: embeddings: vectors of %d and %d dimensions", len(v), len(qv))
		}
		sims[i] = cosine(qv, v)
		lo, hi = min(lo, sims[i]), max(hi, sims[i])
	}
	w := e.cfg.Weight
	n := float64(max(len(cands)-1, 1))
	for i := range cands {
		sim := 0.0
		if hi > lo {
			sim = (sims[i] - lo) / (hi - lo)
		}
		// The lexical rank as a share: 1 for the first, 0 for the last;
		// 1 + so that no score is 0 (which drops a candidate).
		cands[i].Score = 1 + (1-w)*(1-float64(i)/n) + w*sim
	}
	return nil
}

// toolText is what is embedded of a candidate's tool: its name, title
// and description, capped.
func toolText(c Candidate) string {
	t := c.Tool
	s := strings.Join(words(t.Name), " ")
	if t.Title != "" {
		s += ". " + t.Title
	}
	if t.Description != "" {
		s += ". " + t.Description
	}
	return capText(s, 2000)
}

// embedRequest and embedResponse are the OpenAI-compatible embeddings
// API's.
type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
}

// maxEmbedResponse bounds an embeddings answer (about 8,000 vectors of
// 1,024 dimensions as JSON).
const maxEmbedResponse = 128 << 20

// embed returns the vectors of inputs, in their order.
func (e *Embeddings) embed(ctx context.Context, inputs []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	body, err := json.Marshal(embedRequest{Model: e.cfg.Model, Input: inputs})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search: embeddings: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("search: embeddings: the server answered %s", resp.Status)
	}
	var out embedResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxEmbedResponse)).Decode(&out); err != nil {
		return nil, fmt.Errorf("search: embeddings: the answer is not the embeddings API's: %v", err)
	}
	vecs := make([][]float32, len(inputs))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(inputs) || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("search: embeddings: the answer has a vector for input %d of %d", d.Index, len(inputs))
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if v == nil {
			return nil, fmt.Errorf("search: embeddings: the answer has no vector for input %d", i)
		}
	}
	return vecs, nil
}

// fail logs err, at most once a minute.
func (e *Embeddings) fail(err error) {
	e.mu.Lock()
	now := time.Now()
	quiet := now.Sub(e.logged) < time.Minute
	if !quiet {
		e.logged = now
	}
	e.mu.Unlock()
	if !quiet {
		e.log.Warn("search: the embeddings reranker failed; the lexical ranking stands", "err", err)
	}
}

// cosine is the cosine similarity of a and b, of one length.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
