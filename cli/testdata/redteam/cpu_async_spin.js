// expect: E_TIMEOUT
while (true) { await Promise.resolve(1) }
