package bindings

import "time"

// callStack is the stack a call's goroutine grows to before it enters the
// broker's path (authorization, the policy's Decide, dispatch): deep
// enough that the path does not grow it again.
const callStack = 8 << 10

// growStack grows the calling goroutine's stack to hold a frame of
// callStack bytes, while the stack is still shallow: one copy of a few
// frames instead of several copies of the deep broker path, each of which
// walks every frame (runtime.newstack, copystack) — a fifth of the
// server's CPU in a fan-out before it.
//
//go:noinline
func growStack() byte {
	var buf [callStack]byte
	stackSink(buf[:])
	return buf[callStack-1]
}

//go:noinline
func stackSink(b []byte) { b[0] = 1 }

// callGoroutines runs the broker's side of the programs' calls on
// goroutines that are reused: a call goes to an idle one if there is one,
// else to a new one, which grows its stack once (growStack) and, after
// its call, waits callIdle for another before it ends. A program's calls
// thus cost neither a goroutine start nor a stack growth each while calls
// keep coming (a fan-out, runs back to back), and no goroutine outlives a
// burst by more than callIdle. A call blocked in its tool holds only its
// own goroutine: the others start new ones.
var callGoroutines = make(chan func()) // unbuffered: only an idle goroutine receives

// callIdle is how long a call goroutine waits for another call.
const callIdle = 20 * time.Millisecond

// goCall runs fn on a call goroutine.
func goCall(fn func()) {
	select {
	case callGoroutines <- fn:
	default:
		go serveCalls(fn)
	}
}

func serveCalls(fn func()) {
	growStack()
	var idle *time.Timer
	for {
		fn()
		fn = nil
		if idle == nil {
			idle = time.NewTimer(callIdle)
		} else {
			idle.Reset(callIdle)
		}
		select {
		case fn = <-callGoroutines:
			idle.Stop()
		case <-idle.C:
			return
		}
	}
}
