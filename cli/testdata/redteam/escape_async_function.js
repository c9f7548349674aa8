// expect: E_GUEST_ERROR
const AF = (async () => {}).constructor; return await AF("return 1")()
