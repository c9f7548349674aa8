;; Exports neither _start nor run. Expect E_MODULE_INVALID.
;;
;; Build: wat2wasm --enable-all hostile_no_entry.wat -o hostile_no_entry.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func (export "main")))
