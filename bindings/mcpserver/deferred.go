package mcpserver

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/tools"
)

// Deferred listing.
//
// Over the list threshold, tools/list holds the pinned tools and the
// discovery tools; every other tool exposed to direct callers is still
// served (a tools/call works), and a tool that programs may not call — a
// possibly destructive upstream tool under the default policy, say — is
// added to a session's tools/list once that session's search_tools
// surfaces it, announced with notifications/tools/list_changed, like
// Anthropic's deferred tool loading. Tools programs may call are not
// added: search_tools tells the model to call them from run_code.
//
// So every tool search_tools or describe_tools shows a caller can be
// called by it, by the route its `call` field names, and a write tool of
// a server without annotations is reachable with a person watching each
// call (the MCP client asks before a direct call), never from a program
// unseen.

// revealed is, per session, the deferred tools its searches surfaced. An
// entry goes when its session is garbage (the map holds weak pointers).
type revealed struct {
	mu sync.Mutex // guards m
	m  map[weak.Pointer[mcp.ServerSession]]map[string]bool
}

// add records names as surfaced to ss; it reports whether any was new.
func (r *revealed) add(ss *mcp.ServerSession, names []string) bool {
	if ss == nil || len(names) == 0 {
		return false
	}
	k := weak.Make(ss)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[weak.Pointer[mcp.ServerSession]]map[string]bool{}
	}
	set := r.m[k]
	if set == nil {
		set = map[string]bool{}
		r.m[k] = set
		runtime.AddCleanup(ss, r.drop, k)
	}
	added := false
	for _, n := range names {
		if !set[n] {
			set[n] = true
			added = true
		}
	}
	return added
}

func (r *revealed) drop(k weak.Pointer[mcp.ServerSession]) {
	r.mu.Lock()
	delete(r.m, k)
	r.mu.Unlock()
}

// has reports whether name was surfaced to ss.
func (r *revealed) has(ss *mcp.ServerSession, name string) bool {
	if ss == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[weak.Make(ss)][name]
}

// revealFound lists to ss the deferred tools that programs may not call
// among search_tools' answer raw, and announces the change. It returns a
// note for the model naming the tools now listed, or "".
func (s *Server) revealFound(ss *mcp.ServerSession, raw json.RawMessage) string {
	var res bindings.SearchResult
	if ss == nil || json.Unmarshal(raw, &res) != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, t := range res.Tools {
		if s.deferred[t.Name] && !slices.Contains(t.Callers, string(tools.Code)) {
			names = append(names, t.Name)
		}
	}
	if !s.revealed.add(ss, names) {
		return ""
	}
	// Re-adding an unchanged definition makes the SDK send
	// notifications/tools/list_changed (debounced) to every session; each
	// client re-lists and gets its own list (filterToolsList).
	d := s.deferredDefs[names[0]]
	s.mcp.AddTool(d.tool, s.safe(names[0], d.handler))
	return "Added to your tool list (call them directly; programs may not call them): " + strings.Join(names, ", ") + "."
}

// listedTo reports whether tools/list shows name to ss: false only for a
// deferred tool not surfaced to ss. The caller holds s.mu.
func (s *Server) listedTo(ss *mcp.ServerSession, name string) bool {
	return !s.deferred[name] || s.revealed.has(ss, name)
}
