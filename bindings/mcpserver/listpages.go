package mcpserver

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
)

// Paging of tools/list. The list is filtered per request (principal,
// session, hidden aliases: filterToolsList), so it is paged after the
// filter, here, and never by the SDK, whose pages are cut before it: a
// page whose tools were all filtered out would come back empty or null.
// Every page is an array with at least one tool (but the only page of an
// empty list). The order is fixed: run_code, then the discovery tools,
// then read_output, then every other tool by name; so run_code and the
// discovery tools are on the first page. A cursor is the position of the
// last tool of its page (rank and name), not an index: after a
// notifications/tools/list_changed it still resumes where the client left,
// with the tools added after it, and without repeating or skipping any
// that stayed.

// listPageSize is the number of tools in one page of tools/list.
const listPageSize = 1000

// sdkPageSize is the SDK's page size (ServerOptions.PageSize): large enough
// that it hands filterToolsList the whole registered list.
const sdkPageSize = 1 << 30

// listPosition is a tool's place in the list order.
type listPosition struct {
	rank int
	name string
}

// listRank orders the tools: run_code first, then the discovery tools,
// read_output, and the rest.
func listRank(name string) int {
	switch {
	case name == RunCodeName:
		return 0
	case bindings.IsDiscovery(name):
		return 1
	case name == ReadOutputName:
		return 2
	}
	return 3
}

func (p listPosition) less(q listPosition) bool {
	if p.rank != q.rank {
		return p.rank < q.rank
	}
	return p.name < q.name
}

// listPage sorts ts in list order and returns the page after position
// after (the zero position: the first page), of at most size tools, and
// the cursor of the next page ("" when it is the last).
func listPage(ts []*mcp.Tool, after listPosition, size int) ([]*mcp.Tool, string) {
	pos := func(t *mcp.Tool) listPosition { return listPosition{listRank(t.Name), t.Name} }
	slices.SortFunc(ts, func(a, b *mcp.Tool) int {
		pa, pb := pos(a), pos(b)
		switch {
		case pa.less(pb):
			return -1
		case pb.less(pa):
			return 1
		}
		return 0
	})
	start := 0
	if after != (listPosition{}) {
		start, _ = slices.BinarySearchFunc(ts, after, func(t *mcp.Tool, p listPosition) int {
			if !p.less(pos(t)) {
				return -1 // at or before the cursor: already sent
			}
			return 1
		})
	}
	page := ts[start:min(start+size, len(ts))]
	out := make([]*mcp.Tool, len(page)) // never nil: "tools": []
	copy(out, page)
	if start+size >= len(ts) {
		return out, ""
	}
	return out, encodeListCursor(pos(out[len(out)-1]))
}

// listCursorPrefix versions the cursor.
const listCursorPrefix = "t1."

func encodeListCursor(p listPosition) string {
	return listCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(p.rank)+"\x00"+p.name))
}

func decodeListCursor(c string) (listPosition, bool) {
	rest, ok := strings.CutPrefix(c, listCursorPrefix)
	if !ok || len(rest) > 1024 {
		return listPosition{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return listPosition{}, false
	}
	r, name, ok := strings.Cut(string(b), "\x00")
	rank, err := strconv.Atoi(r)
	if !ok || err != nil || rank < 0 || rank > 3 || name == "" {
		return listPosition{}, false
	}
	return listPosition{rank, name}, true
}

// invalidCursor is the JSON-RPC error of a cursor this server did not
// issue (MCP: invalid params).
func invalidCursor() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: "invalid cursor: pass the nextCursor of a tools/list result unchanged, or list from the start without a cursor"}
}
