;; A table of 1,000,000 elements. Expect E_MODULE_LIMIT.
;;
;; Build: wat2wasm --enable-all hostile_table_big.wat -o hostile_table_big.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (table 1000000 funcref) (func (export "run")))
