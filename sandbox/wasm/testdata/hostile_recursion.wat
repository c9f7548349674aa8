;; Unbounded recursion. Expect E_STACK.
;;
;; Build: wat2wasm --enable-all hostile_recursion.wat -o hostile_recursion.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (func $f (export "run") (call $f)))
