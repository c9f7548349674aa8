;; Reads WASI's random and clocks, then calls count and pay with what it
;; read, and returns it: {"r": 8 random bytes, "t": realtime ns, "m":
;; monotonic ns, "s": realtime resolution ns}, each as 16 hex digits (the
;; arguments of both calls). A tool error returns its JSON instead. Used to
;; check that a replayable run (sandbox.Job.Seed and Clock) reads the same
;; values each time, so that it can be resumed by replay.
;;
;; Build: wat2wasm wasi_replay.wat -o wasi_replay.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_res_get" (func $clock_res_get (param i32 i32) (result i32)))
  (import "sandcall" "call" (func $call (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "wait" (func $wait (param i32) (result i32)))
  (import "sandcall" "result_len" (func $result_len (param i32) (result i32)))
  (import "sandcall" "result_read" (func $result_read (param i32 i32 i32) (result i32)))
  (import "sandcall" "set_result" (func $set_result (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "count")
  (data (i32.const 8) "pay")
  (data (i32.const 480) "0123456789abcdef")
  (data (i32.const 512) "{\"r\":\"XXXXXXXXXXXXXXXX\",\"t\":\"XXXXXXXXXXXXXXXX\",\"m\":\"XXXXXXXXXXXXXXXX\",\"s\":\"XXXXXXXXXXXXXXXX\"}")
  ;; $hex writes v as 16 lower-case hex digits at p.
  (func $hex (param $v i64) (param $p i32)
    (local $i i32)
    (local.set $i (i32.const 15))
    (loop $l
      (i32.store8 (i32.add (local.get $p) (local.get $i))
        (i32.load8_u (i32.add (i32.const 480) (i32.wrap_i64 (i64.and (local.get $v) (i64.const 15))))))
      (local.set $v (i64.shr_u (local.get $v) (i64.const 4)))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $l (i32.ge_s (local.get $i) (i32.const 0)))))
  ;; $tool calls the tool named at name (len) with the arguments read; on a
  ;; tool error it sets the result to the error and returns 1.
  (func $tool (param $name i32) (param $len i32) (result i32)
    (local $h i32) (local $st i32) (local $n i32)
    (local.set $h (call $call (local.get $name) (local.get $len) (i32.const 512) (i32.const 93)))
    (local.set $st (call $wait (local.get $h)))
    (local.set $n (call $result_len (local.get $h)))
    (drop (call $result_read (local.get $h) (i32.const 4096) (local.get $n)))
    (if (i32.ne (local.get $st) (i32.const 0))
      (then (drop (call $set_result (i32.const 4096) (local.get $n))) (return (i32.const 1))))
    (i32.const 0))
  (func (export "run")
    (drop (call $random_get (i32.const 256) (i32.const 8)))
    (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 264)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 272)))
    (drop (call $clock_res_get (i32.const 0) (i32.const 280)))
    (call $hex (i64.load (i32.const 256)) (i32.const 518))
    (call $hex (i64.load (i32.const 264)) (i32.const 541))
    (call $hex (i64.load (i32.const 272)) (i32.const 564))
    (call $hex (i64.load (i32.const 280)) (i32.const 587))
    (if (call $tool (i32.const 0) (i32.const 5)) (then (return)))
    (if (call $tool (i32.const 8) (i32.const 3)) (then (return)))
    (drop (call $set_result (i32.const 512) (i32.const 93)))))
