;; A WASI command whose _start returns without setting a result. Expect ok: null.
;;
;; Build: wat2wasm start_null.wat -o start_null.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (memory (export "memory") 1) (func (export "_start")))
