// expect: E_GUEST_ERROR
return (0, globalThis["ev" + "al"])("1 + 1")
