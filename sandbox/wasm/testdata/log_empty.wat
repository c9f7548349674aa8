;; Logs "abc" and then 20,000 empty entries: an empty entry costs a byte of
;; the log budget, so with a 100-byte budget 98 entries are kept.
;;
;; Build: wat2wasm log_empty.wat -o log_empty.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "sandcall" "log" (func $log (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "abc")
  (func (export "run") (local $i i32)
    (call $log (i32.const 0) (i32.const 3))
    (loop $l
      (call $log (i32.const 0) (i32.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 20000))))))
