// expect: E_SYNTAX
}); globalThis.escaped = true; (async () => {
