package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// putMeta is put, keeping meta (the run's information-flow label) with the
// output so that each read_output page carries it in its _meta.
func (s *outputStore) putMeta(principal string, data []byte, meta map[string]any) (string, bool) {
	ref, ok := s.put(principal, data)
	if ok && meta != nil {
		s.mu.Lock()
		if e, found := s.byRef[ref]; found {
			e.Value.(*storedOutput).meta = meta
		}
		s.mu.Unlock()
	}
	return ref, ok
}

// metaOf returns the meta kept with principal's output ref, or nil.
func (s *outputStore) metaOf(principal, ref string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byRef[ref]
	if !ok {
		return nil
	}
	o := e.Value.(*storedOutput)
	if o.principal != principal {
		return nil
	}
	return o.meta
}

// withMeta adds meta to r's _meta (the label of a run_code result and of
// its read_output pages).
func withMeta(r *mcp.CallToolResult, meta map[string]any) *mcp.CallToolResult {
	if len(meta) == 0 || r == nil {
		return r
	}
	if r.Meta == nil {
		r.Meta = mcp.Meta{}
	}
	for k, v := range meta {
		r.Meta[k] = v
	}
	return r
}
