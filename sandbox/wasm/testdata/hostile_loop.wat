;; Runaway CPU: an infinite loop. Expect E_TIMEOUT.
;;
;; Build: wat2wasm --enable-all hostile_loop.wat -o hostile_loop.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func (export "run") (loop $l (br $l))))
