;; Imports a function from a module other than sandcall and WASI. Expect E_MODULE_INVALID.
;;
;; Build: wat2wasm --enable-all hostile_import_env.wat -o hostile_import_env.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (import "env" "system" (func (param i32))) (func (export "run")))
