// expect: E_SYNTAX
/* */ }) ; (async () => {
