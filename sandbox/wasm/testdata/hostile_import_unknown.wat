;; Imports a sandcall function that does not exist. Expect E_MODULE_INVALID.
;;
;; Build: wat2wasm --enable-all hostile_import_unknown.wat -o hostile_import_unknown.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (import "sandcall" "exec" (func)) (func (export "run")))
