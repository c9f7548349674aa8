// expect: ok:7
return 3 + 4
//# sourceMappingURL=/etc/passwd
