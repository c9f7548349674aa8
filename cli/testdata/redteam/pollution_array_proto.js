// expect: ok:1
Array.prototype.map = () => { for (;;) {} }; Object.prototype.toJSON = () => "pwned"; JSON.stringify = null; return 1
