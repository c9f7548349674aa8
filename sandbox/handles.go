package sandbox

// Opaque handles (information flow): a program may ask for a tool's result
// as a handle instead of its value, so that the result's label taints only
// the calls the handle is passed to, not the whole run. The host (the
// broker) keeps the value; engines only route the names below to
// Host.Call like any other call.
const (
	// OpaquePrefix before a tool's name asks for its result as a handle:
	// Host.Call(ctx, "$opaque:read_doc", args) returns {"$handle": "h1"}.
	// JavaScript writes tools.read_doc(args, {opaque: true}); any guest may
	// call the prefixed name.
	OpaquePrefix = "$opaque:"
	// ReadHandle is the call that reads a handle's value:
	// Host.Call(ctx, "$read", {"$handle": "h1"}) returns the value and
	// joins its label into the run. JavaScript writes tools.$read(h).
	ReadHandle = "$read"
)
