;; Recurses without end: the run stops with E_STACK.
;;
;; Build: wat2wasm --enable-all --no-check recursion.wat -o recursion.wasm   (wabt 1.0.32; go generate ./sandbox/parity rebuilds all)
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
  (func $down (param i32) (result i32) (i32.add (call $down (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))
  (func (export "run") (result i32) (call $down (i32.const 0))))
