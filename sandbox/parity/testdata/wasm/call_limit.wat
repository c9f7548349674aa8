;; Calls ping({"n":1}) until a call fails, then sets the result to that error JSON (the call past MaxCalls fails with E_TOOL_CALL_LIMIT).
;;
;; Build: wat2wasm --enable-all --no-check call_limit.wat -o call_limit.wasm   (wabt 1.0.32; go generate ./sandbox/parity rebuilds all)
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
  (memory (export "memory") 1)
  (data (i32.const 0) "ping")
  (data (i32.const 16) "{\"n\":1}")
  (func (export "run")
    (local $h i32) (local $len i32)
    (loop $again
      (local.set $h (call $call (i32.const 0) (i32.const 4) (i32.const 16) (i32.const 7)))
      (if (i32.eqz (call $wait (local.get $h))) (then
        (drop (call $result_read (local.get $h) (i32.const 1024) (i32.const 1024)))
        (br $again))))
    (local.set $len (call $result_len (local.get $h)))
    (drop (call $result_read (local.get $h) (i32.const 1024) (local.get $len)))
    (drop (call $set_result (i32.const 1024) (local.get $len)))))
