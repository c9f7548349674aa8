// expect: E_GUEST_ERROR
return (() => {}).constructor("return globalThis.process")()
