// expect: E_SYNTAX
import fs from "fs"; return fs.readFileSync("/etc/passwd", "utf8")
