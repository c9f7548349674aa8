;; A module without memory: every function that takes a pointer returns -1. Returns the sum of the results of call and set_result (-2).
;;
;; Build: wat2wasm no_memory.wat -o no_memory.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "sandcall" "abi_version" (func $abi_version (result i32)))
  (import "sandcall" "call" (func $call (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "call_async" (func $call_async (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "wait" (func $wait (param i32) (result i32)))
  (import "sandcall" "result_len" (func $result_len (param i32) (result i32)))
  (import "sandcall" "result_read" (func $result_read (param i32 i32 i32) (result i32)))
  (import "sandcall" "input_len" (func $input_len (result i32)))
  (import "sandcall" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "sandcall" "set_result" (func $set_result (param i32 i32) (result i32)))
  (import "sandcall" "log" (func $log (param i32 i32)))
  (func (export "run") (result i32)
    (i32.add (call $call (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))
             (call $set_result (i32.const 0) (i32.const 0)))))
