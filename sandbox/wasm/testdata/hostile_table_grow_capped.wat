;; table.grow on a table with a small maximum is allowed; growing past it returns -1. Expect ok: -1.
;;
;; Build: wat2wasm --enable-all hostile_table_grow_capped.wat -o hostile_table_grow_capped.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (table 1 100 funcref) (func (export "run") (result i32) (table.grow 0 (ref.null func) (i32.const 100000000))))
