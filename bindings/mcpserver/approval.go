package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
)

// sessionApprover asks the person behind an MCP session through
// elicitation.
type sessionApprover struct{ ss *mcp.ServerSession }

var _ bindings.Approver = sessionApprover{}

func (a sessionApprover) Approve(ctx context.Context, req bindings.ApprovalRequest) (bool, error) {
	if a.ss == nil {
		return false, bindings.ErrApprovalUnsupported
	}
	ip := a.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false, bindings.ErrApprovalUnsupported
	}
	// From protocol 2026-07-28 on, a server may not send requests while
	// serving one (multi round-trip requests, SEP-2322, replace them); a
	// program waiting mid-run on an approval cannot use those yet.
	if ip.ProtocolVersion >= "2026-07-28" {
		return false, fmt.Errorf("%w: protocol %s sessions cannot be asked mid-call", bindings.ErrApprovalUnsupported, ip.ProtocolVersion)
	}
	caps := ip.Capabilities.Elicitation
	if caps.Form == nil && caps.URL != nil {
		return false, bindings.ErrApprovalUnsupported
	}
	res, err := a.ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: req.Message,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
	if err != nil {
		return false, err
	}
	if res == nil {
		return false, errors.New("empty elicitation result")
	}
	return res.Action == "accept", nil
}
