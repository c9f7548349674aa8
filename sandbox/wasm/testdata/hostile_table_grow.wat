;; table.grow by 100M on a table without a maximum. Expect E_MODULE_LIMIT (refused before compilation).
;;
;; Build: wat2wasm --enable-all hostile_table_grow.wat -o hostile_table_grow.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (table 1 funcref) (func (export "run") (result i32) (table.grow 0 (ref.null func) (i32.const 100000000))))
