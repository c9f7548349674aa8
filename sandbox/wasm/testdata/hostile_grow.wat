;; Memory growth past the limit: memory.grow returns -1; the result is the page count. Expect ok.
;;
;; Build: wat2wasm --enable-all hostile_grow.wat -o hostile_grow.wasm   (wabt 1.0.32; go generate ./sandbox/wasm rebuilds all)
(module (memory 1) (func (export "run") (result i32)
  (local $i i32)
  (loop $l (drop (memory.grow (i32.const 1024))) (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (i32.const 64))))
  (memory.size)))
