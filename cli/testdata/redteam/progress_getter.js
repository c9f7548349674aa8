// expect: ok:[0,"E_RESULT_INVALID"]
let ran = 0; try { progress({ get x() { ran++; progress("inner"); return 1 } }) } catch (e) { return [ran, e.code] } return ran
