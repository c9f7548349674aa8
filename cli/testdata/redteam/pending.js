// expect: E_UNSETTLED
await new Promise(() => {}); return 1
