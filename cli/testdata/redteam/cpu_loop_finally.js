// expect: E_TIMEOUT
for (;;) { try { throw 1 } catch (e) { continue } finally { } }
