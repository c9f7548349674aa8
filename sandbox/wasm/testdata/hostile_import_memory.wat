;; Imports a memory. Expect E_MODULE_INVALID.
;;
;; Build: wat2wasm --enable-all hostile_import_memory.wat -o hostile_import_memory.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (import "sandcall" "memory" (memory 1)) (func (export "run")))
