;; A function that returns an i64 where it declares an i32: fails validation.
;;
;; Build: wat2wasm --no-check type_mismatch.wat -o type_mismatch.wasm   (wabt 1.0.32)
(module (func (export "run") (result i32) (i64.const 1)))
