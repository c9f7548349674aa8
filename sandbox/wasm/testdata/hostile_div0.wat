;; Integer division by zero. Expect E_GUEST_ERROR.
;;
;; Build: wat2wasm --enable-all hostile_div0.wat -o hostile_div0.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func (export "run") (result i32) (i32.div_s (i32.const 1) (i32.const 0))))
