// expect: E_GUEST_ERROR
const G = (function* () {}).constructor; return G("yield 1")().next().value
