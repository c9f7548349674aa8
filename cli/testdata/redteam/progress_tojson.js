// expect: ok:0
let ran = 0; progress({ toJSON() { ran++; progress(2); return 1 }, valueOf() { ran++ }, toString() { ran++ } }); return ran
