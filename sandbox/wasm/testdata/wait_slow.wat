;; Calls tool "slow", which never returns: the run ends at its deadline or when cancelled; wait then returns -5.
;;
;; Build: wat2wasm wait_slow.wat -o wait_slow.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
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
  (memory (export "memory") 1)
  (data (i32.const 0) "slow")
  (func (export "run") (result i32)
    (call $wait (call $call_async (i32.const 0) (i32.const 4) (i32.const 0) (i32.const 0)))))
