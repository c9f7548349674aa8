// expect: ok:[]
return ["require", "process", "fetch", "setTimeout", "setInterval", "eval", "Function", "XMLHttpRequest", "WebAssembly", "Deno", "Bun", "module", "__dirname"].filter(n => typeof globalThis[n] !== "undefined")
