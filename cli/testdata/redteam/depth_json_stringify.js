// expect: E_GUEST_ERROR|E_RESULT_INVALID|E_TIMEOUT
let o = []; for (let i = 0; i < 200000; i++) o = [o]; return JSON.stringify(o).length
