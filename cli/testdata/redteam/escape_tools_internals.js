// expect: ok:true
const keys = Object.getOwnPropertyNames(tools).concat(Object.getOwnPropertyNames(Object.getPrototypeOf(tools) || {})); return keys.every(k => typeof tools[k] === "function" || k === "constructor" || k === "__proto__")
