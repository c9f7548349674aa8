;; Out-of-bounds load. Expect E_GUEST_ERROR.
;;
;; Build: wat2wasm --enable-all hostile_oob.wat -o hostile_oob.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (memory 1) (func (export "run") (result i32) (i32.load (i32.const 70000))))
