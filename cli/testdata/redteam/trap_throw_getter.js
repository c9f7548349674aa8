// expect: E_GUEST_ERROR
const e = new Error("x"); Object.defineProperty(e, "message", { get() { for (;;) {} } }); throw e
