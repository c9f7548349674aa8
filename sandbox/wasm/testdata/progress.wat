;; Stores a partial result with progress, checks that invalid JSON is refused
;; with -6 (and not stored), then spins until the deadline: the run ends with
;; E_TIMEOUT and the partial result {"step":1}.
;;
;; Build: wat2wasm progress.wat -o progress.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module
  (import "sandcall" "progress" (func $progress (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"step\": 1}")
  (data (i32.const 16) "{not json")
  (func (export "run")
    (if (i32.ne (call $progress (i32.const 0) (i32.const 11)) (i32.const 0)) (then unreachable))
    (if (i32.ne (call $progress (i32.const 16) (i32.const 9)) (i32.const -6)) (then unreachable))
    (if (i32.ne (call $progress (i32.const 65530) (i32.const 100)) (i32.const -1)) (then unreachable))
    (loop $spin (br $spin))))
