// expect: E_TIMEOUT
const a = Array.from({ length: 1000 }, (_, i) => i); a.sort(() => { for (;;) {} }); return 1
