// expect: ok:["function","function"]
tools.$search = () => 1; delete tools.$describe; return [typeof tools.$search("x").then, typeof tools.$describe]
