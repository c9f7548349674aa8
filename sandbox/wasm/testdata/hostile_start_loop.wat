;; A start section that loops forever (runs at instantiation). Expect E_TIMEOUT.
;;
;; Build: wat2wasm --enable-all hostile_start_loop.wat -o hostile_start_loop.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func $s (loop $l (br $l))) (start $s) (func (export "run")))
