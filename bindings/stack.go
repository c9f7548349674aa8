package bindings

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
