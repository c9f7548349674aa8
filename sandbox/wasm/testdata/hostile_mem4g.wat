;; 4 GiB initial memory. Expect E_MODULE_LIMIT.
;;
;; Build: wat2wasm --enable-all hostile_mem4g.wat -o hostile_mem4g.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (memory 65536) (func (export "run")))
