package upstream

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOriginTransport: the configured headers reach the configured origin
// only (default ports made explicit), a request to any other origin that is
// not a followed redirect is refused before it is sent (an SSE endpoint
// naming another host), and an answer over MaxResponseBytes is cut off.
func TestOriginTransport(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	var gotAuth atomic.Value
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/big" {
			w.Write([]byte(strings.Repeat("x", MaxResponseBytes+1)))
		}
	}))
	defer home.Close()
	tr, err := newOriginTransport(http.DefaultTransport, home.URL+"/mcp", map[string]string{"Authorization": "Bearer s3cret"}, false)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.client()
	resp, err := c.Get(home.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotAuth.Load() != "Bearer s3cret" {
		t.Errorf("the configured origin got Authorization %q", gotAuth.Load())
	}
	resp, err = c.Post(other.URL+"/messages", "application/json", strings.NewReader(`{}`))
	if !errors.Is(err, ErrOtherOrigin) || otherHits.Load() != 0 {
		t.Errorf("POST to another origin: %v, %d requests reached it", err, otherHits.Load())
	}
	if err == nil {
		resp.Body.Close()
	}
	resp, err = c.Get(home.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("an answer over the cap: %v, want ErrResponseTooLarge", err)
	}

	for _, tc := range []struct{ a, b string }{{"http://h/x", "http://H:80/y"}, {"https://h", "https://h:443"}} {
		ta, _ := newOriginTransport(nil, tc.a, nil, false)
		tb, _ := newOriginTransport(nil, tc.b, nil, false)
		if ta.origin != tb.origin {
			t.Errorf("%s and %s: origins %s and %s differ", tc.a, tc.b, ta.origin, tb.origin)
		}
	}
}
