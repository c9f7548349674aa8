// expect: E_TIMEOUT
while (1) {}
