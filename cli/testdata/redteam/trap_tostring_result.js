// expect: E_RESULT_INVALID|ok:{}
return { toString() { for (;;) {} }, valueOf() { for (;;) {} }, toJSON() { for (;;) {} } }
