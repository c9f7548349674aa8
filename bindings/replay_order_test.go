package bindings

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// raceProgram lets a Promise.race decide which effect runs before the call
// that needs an approval: in the first attempt fast wins (slow waits), in
// a replay both are answered from the log at once and either may win.
const raceProgram = `const w = await Promise.race([
	tools.slow({}).then(() => "slow"),
	tools.fast({}).then(() => "fast")]);
if (w === "fast") await tools.effect_a({}); else await tools.effect_b({});
await tools.pay({amount: 1});
return w;`

// TestReplayComparesTheOrderedSequence: replay compares the whole ordered
// sequence of calls, by the order the program made them: when a
// Promise.race goes the other way on replay and the program calls the
// other effect, that is a divergence (denied), not a new call — so the two
// effects never both run, and the approved call is not made on a run that
// strayed. Tried several times: the replay's race goes either way.
func TestReplayComparesTheOrderedSequence(t *testing.T) {
	flipped := 0
	for i := range 10 {
		var effA, effB, pays atomic.Int64
		release := make(chan struct{})
		var once sync.Once
		slow := echo("slow")
		first := true
		slow.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			if first {
				select { // the first attempt: slow until effect_a was made
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return json.RawMessage(`{}`), nil
		}
		effectA := counter("effect_a", &effA)
		innerA := effectA.Handler
		effectA.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			defer once.Do(func() { close(release) })
			return innerA(ctx, args)
		}
		pay := counter("pay", &pays)
		b, _ := approvalBroker(t, BrokerConfig{})
		c, err := tools.NewCatalog(slow, echo("fast"), effectA, counter("effect_b", &effB), pay)
		if err != nil {
			t.Fatal(err)
		}
		b.cfg.Catalog = c
		r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
		if err != nil {
			t.Fatal(err)
		}
		req := RunRequest{Program: sandbox.Program{Source: raceProgram}, Suspend: true, Seed: 5,
			Clock: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)}
		res, susp := r.RunResumable(context.Background(), req)
		if susp == nil {
			t.Fatalf("attempt %d: no suspension: %+v %s", i, res.Error, res.Result)
		}
		if effA.Load() != 1 || effB.Load() != 0 {
			t.Fatalf("attempt %d, first run: effect_a %d, effect_b %d; want 1 and 0", i, effA.Load(), effB.Load())
		}
		first = false
		req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
		res, susp = r.RunResumable(context.Background(), req)
		if effA.Load()+effB.Load() != 1 {
			t.Fatalf("attempt %d: effect_a ran %d times, effect_b %d times: the replay took the other branch and made its effect too",
				i, effA.Load(), effB.Load())
		}
		switch {
		case res.OK && string(res.Result) == `"fast"`:
			if pays.Load() != 1 {
				t.Errorf("attempt %d: the replay followed the first run, %d pays, want 1", i, pays.Load())
			}
		case !res.OK && res.Error.Code == sandbox.EToolDenied && strings.Contains(res.Error.Message, "diverged"):
			flipped++
			if pays.Load() != 0 {
				t.Errorf("attempt %d: the run diverged and still paid (%d)", i, pays.Load())
			}
		default:
			t.Errorf("attempt %d: replay %+v %s (suspension %+v)", i, res.Error, res.Result, susp)
		}
	}
	t.Logf("the replay's race went the other way %d times in 10", flipped)
}
