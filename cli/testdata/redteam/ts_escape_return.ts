// expect: E_SYNTAX
return 1 }); globalThis.x = 1; (async () => { return 2
