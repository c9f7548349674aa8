;; unreachable. Expect E_GUEST_ERROR.
;;
;; Build: wat2wasm --enable-all hostile_unreachable.wat -o hostile_unreachable.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func (export "run") unreachable))
