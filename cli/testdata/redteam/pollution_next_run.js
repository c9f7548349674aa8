// expect: ok:true
return Array.prototype.map.toString().includes("native") && Object.prototype.toJSON === undefined && typeof JSON.stringify === "function"
