;; Fan-out in WebAssembly: fanout.js as a module. 1,000 calls of ping({"n":i}) for i = 0..999,
;; started with call_async in batches of 50 and waited for; returns the sum of the results
;; (500500), or -1 if a call fails. (sandbox/parity/testdata/wasm/fanout.wat is this module with 100 calls.)
;;
;; Build: wat2wasm --enable-all --no-check fanout.wat -o fanout.wasm   (wabt 1.0.32; go generate ./examples/demo)
(module
  (import "sandcall" "call_async" (func $call_async (param i32 i32 i32 i32) (result i32)))
  (import "sandcall" "wait" (func $wait (param i32) (result i32)))
  (import "sandcall" "result_len" (func $result_len (param i32) (result i32)))
  (import "sandcall" "result_read" (func $result_read (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $total i32 (i32.const 1000))
  (global $batch i32 (i32.const 50))
  ;; 0: "ping"; 16: the arguments {"n":DIGITS}; 64: a result; 1024: the batch's handles.
  (data (i32.const 0) "ping")
  (data (i32.const 16) "{\"n\":")

  ;; itoa writes the decimal digits of v (>= 0) at p and returns their count.
  (func $itoa (param $v i32) (param $p i32) (result i32)
    (local $n i32) (local $t i32) (local $i i32)
    (local.set $t (local.get $v))
    (loop $count
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
      (br_if $count (local.get $t)))
    (local.set $i (local.get $n))
    (loop $write
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (local.get $p) (local.get $i))
        (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $write (local.get $i)))
    (local.get $n))

  ;; atoi reads the decimal digits at p..p+n.
  (func $atoi (param $p i32) (param $n i32) (result i32)
    (local $v i32) (local $end i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (block $done (loop $digit
      (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
      (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10))
        (i32.sub (i32.load8_u (local.get $p)) (i32.const 48))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $digit)))
    (local.get $v))

  (func (export "run") (result i32)
    (local $start i32) (local $i i32) (local $k i32) (local $h i32) (local $len i32) (local $sum i32)
    (loop $batches
      ;; start the batch
      (local.set $i (i32.const 0))
      (loop $starts
        (local.set $k (call $itoa (i32.add (local.get $start) (local.get $i)) (i32.const 21)))
        (i32.store8 (i32.add (i32.const 21) (local.get $k)) (i32.const 125)) ;; }
        (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 2)))
          (call $call_async (i32.const 0) (i32.const 4) (i32.const 16) (i32.add (local.get $k) (i32.const 6))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $starts (i32.lt_u (local.get $i) (global.get $batch))))
      ;; wait for it
      (local.set $i (i32.const 0))
      (loop $waits
        (local.set $h (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 2)))))
        (if (call $wait (local.get $h)) (then (return (i32.const -1))))
        (local.set $len (call $result_len (local.get $h)))
        (if (i32.gt_u (local.get $len) (i32.const 16)) (then (return (i32.const -1))))
        (drop (call $result_read (local.get $h) (i32.const 64) (local.get $len)))
        (local.set $sum (i32.add (local.get $sum) (call $atoi (i32.const 64) (local.get $len))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $waits (i32.lt_u (local.get $i) (global.get $batch))))
      (local.set $start (i32.add (local.get $start) (global.get $batch)))
      (br_if $batches (i32.lt_u (local.get $start) (global.get $total))))
    (local.get $sum)))
