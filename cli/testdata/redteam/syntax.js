// expect: E_SYNTAX
const x = ;
