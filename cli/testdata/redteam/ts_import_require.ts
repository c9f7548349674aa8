// expect: E_SYNTAX
import x = require("child_process"); return 1
