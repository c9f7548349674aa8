;; An exponential call tree with no loops: f calls itself twice, 60 levels deep. Expect E_TIMEOUT.
;;
;; Build: wat2wasm --enable-all hostile_calltree.wat -o hostile_calltree.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func $f (param $d i32)
  (if (local.get $d) (then
    (call $f (i32.sub (local.get $d) (i32.const 1)))
    (call $f (i32.sub (local.get $d) (i32.const 1))))))
  (func (export "run") (call $f (i32.const 60))))
