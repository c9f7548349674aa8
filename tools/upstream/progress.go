package upstream

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools"
)

// progressTokens routes an upstream server's notifications/progress to the
// call that asked for them: each call whose caller listens
// (tools.WantsProgress) sends a fresh progress token, and the
// notifications that carry it are reported with tools.ReportProgress under
// that call's context. Each connection has its own. Notifications with any other token (unknown, or of
// a call that has returned) are dropped.
type progressTokens struct {
	next atomic.Uint64
	mu   sync.Mutex
	live map[string]context.Context
}

// add registers ctx's listener under a new token; done ends it.
func (p *progressTokens) add(ctx context.Context) (token string, done func()) {
	token = "sandcall-" + strconv.FormatUint(p.next.Add(1), 10)
	p.mu.Lock()
	if p.live == nil {
		p.live = make(map[string]context.Context)
	}
	p.live[token] = ctx
	p.mu.Unlock()
	return token, func() {
		p.mu.Lock()
		delete(p.live, token)
		p.mu.Unlock()
	}
}

// handle is the client's ProgressNotificationHandler.
func (p *progressTokens) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	ctx := p.live[tok]
	p.mu.Unlock()
	if ctx == nil {
		return
	}
	tools.ReportProgress(ctx, tools.Progress{Progress: req.Params.Progress, Total: req.Params.Total,
		Message: CleanText(req.Params.Message, 200)})
}

// token sets a progress token on params when ctx's caller listens for
// progress; done must be called when the call returns.
func (p *progressTokens) token(ctx context.Context, params *mcp.CallToolParams) (done func()) {
	if !tools.WantsProgress(ctx) {
		return func() {}
	}
	tok, done := p.add(ctx)
	params.SetProgressToken(tok)
	return done
}
