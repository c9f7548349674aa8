;; Makes N sequential calls of tool "ping" (N = the input_len, so the input chooses N) and reads each result; returns N. Used by the calls/s benchmark.
;;
;; Build: wat2wasm calls_1000.wat -o calls_1000.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
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
  (data (i32.const 0) "ping")
  (data (i32.const 16) "{\"n\":1}")
  (func (export "run") (result i32)
    (local $i i32) (local $h i32) (local $n i32)
    (local.set $n (call $input_len))
    (block $done
      (loop $l
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $h (call $call (i32.const 0) (i32.const 4) (i32.const 16) (i32.const 7)))
        (if (i32.ne (call $wait (local.get $h)) (i32.const 0)) (then (unreachable)))
        (drop (call $result_read (local.get $h) (i32.const 100) (i32.const 100)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $n)))
