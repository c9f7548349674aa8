// expect: ok:1
progress("<&>".repeat(80000)); return 1
