;; Logs 64 KiB entries forever: the run stops with E_OUTPUT_LIMIT.
;;
;; Build: wat2wasm --enable-all --no-check log_flood.wat -o log_flood.wasm   (wabt 1.0.32; go generate ./sandbox/parity rebuilds all)
(module
  (import "sandcall" "call" (func $call (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "call_async" (func $call_async (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "wait" (func $wait (param i32) (result i32)))
  (import "sandcall" "result_len" (func $result_len (param i32) (result i32)))
  (import "sandcall" "result_read" (func $result_read (param i32 i32 i32) (result i32)))
  (import "sandcall" "input_len" (func $input_len (result i32)))
  (import "sandcall" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "sandcall" "set_result" (func $set_result (param i32 i32) (result i32)))
  (import "sandcall" "log" (func $log (param i32 i32)))
  (memory (export "memory") 2)
  (data (i32.const 0) "xxxxxxxxxxxxxxxx")
  (func (export "run") (loop $l (call $log (i32.const 0) (i32.const 65536)) (br $l))))
