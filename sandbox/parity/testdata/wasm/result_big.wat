;; Sets a 300,000-character JSON string as the result: over the default result budget (256 KiB).
;;
;; Build: wat2wasm --enable-all --no-check result_big.wat -o result_big.wasm   (wabt 1.0.32; go generate ./sandbox/parity rebuilds all)
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
  (memory (export "memory") 5)
  (func (export "run")
    (i32.store8 (i32.const 0) (i32.const 34))
    (memory.fill (i32.const 1) (i32.const 121) (i32.const 300000))
    (i32.store8 (i32.const 300001) (i32.const 34))
    (drop (call $set_result (i32.const 0) (i32.const 300002)))))
