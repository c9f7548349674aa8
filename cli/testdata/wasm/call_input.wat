;; Input ["NAME",ARGS]: calls tool NAME with ARGS once and sets the result to the payload: the tool's result (status 0) or the error JSON (status 1), as a JS program that catches the ToolError and returns its fields.
;;
;; Build: wat2wasm --enable-all --no-check call_input.wat -o call_input.wasm   (wabt 1.0.32; copy of sandbox/parity/testdata/wasm/call_input.wat)
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
  ;; The input (at 0) is compact JSON ["NAME",ARGS]: the name is the bytes
  ;; from offset 2 to the next quote, the arguments what follows the comma up
  ;; to the closing bracket. The payload goes at 65536.
  (func $do_call (result i32 i32) ;; status, payload length
    (local $n i32) (local $end i32) (local $h i32) (local $st i32) (local $len i32)
    (local.set $n (call $input_len))
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then unreachable))
    (drop (call $input_read (i32.const 0) (local.get $n)))
    (local.set $end (i32.const 2))
    (block $found (loop $scan
      (br_if $found (i32.ge_u (local.get $end) (local.get $n)))
      (br_if $found (i32.eq (i32.load8_u (local.get $end)) (i32.const 34)))
      (local.set $end (i32.add (local.get $end) (i32.const 1)))
      (br $scan)))
    (local.set $h (call $call
      (i32.const 2) (i32.sub (local.get $end) (i32.const 2))
      (i32.add (local.get $end) (i32.const 2))
      (i32.sub (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $end) (i32.const 2)))))
    (local.set $st (call $wait (local.get $h)))
    (local.set $len (call $result_len (local.get $h)))
    (if (i32.gt_u (local.get $len) (i32.const 65536)) (then unreachable))
    (drop (call $result_read (local.get $h) (i32.const 65536) (local.get $len)))
    (local.get $st) (local.get $len))
  (func (export "run")
    (local $st i32) (local $len i32)
    (call $do_call) (local.set $len) (local.set $st)
    (drop (call $set_result (i32.const 65536) (local.get $len)))))
