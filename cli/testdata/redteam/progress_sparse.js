// expect: E_OUTPUT_LIMIT
const a = []; a[1e9] = 1; progress(a); return 1
