// expect: E_RESULT_INVALID
const o = {}; o.o = o; progress(o); return 1
