;; A JSON string holding a byte that is not UTF-8: progress refuses it with
;; -6 (not stored), and as the result it is E_RESULT_INVALID. JSON text is
;; UTF-8; what a client receives must be too.
;;
;; Build: wat2wasm bad_utf8.wat -o bad_utf8.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "sandcall" "progress" (func $progress (param i32 i32) (result i32)))
  (import "sandcall" "set_result" (func $set_result (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\22a\ff\22")
  (func (export "run")
    (if (i32.ne (call $progress (i32.const 0) (i32.const 4)) (i32.const -6)) (then unreachable))
    (drop (call $set_result (i32.const 0) (i32.const 4)))))
