// expect: E_RESULT_INVALID
let o = 1; for (let i = 0; i < 100000; i++) o = [o]; progress(o); return 1
