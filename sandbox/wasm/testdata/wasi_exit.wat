;; A WASI command: writes "hi" to stdout and "oops" to stderr, then proc_exit(3). Expect E_GUEST_ERROR "exit code 3" and the logs ["hi", "[error] oops"].
;;
;; Build: wat2wasm wasi_exit.wat -o wasi_exit.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "hi\n")
  (data (i32.const 8) "oops")
  ;; iovecs at 64: {0, 3} and at 72: {8, 4}
  (data (i32.const 64) "\00\00\00\00\03\00\00\00\08\00\00\00\04\00\00\00")
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 128)))
    (drop (call $fd_write (i32.const 2) (i32.const 72) (i32.const 1) (i32.const 128)))
    (call $proc_exit (i32.const 3))))
