// expect: E_RESULT_INVALID|E_OUTPUT_LIMIT|E_GUEST_ERROR
let o = {}; for (let i = 0; i < 100000; i++) o = { o }; return o
