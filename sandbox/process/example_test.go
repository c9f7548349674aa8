package process_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/process"
)

// The test binary doubles as the worker (see TestMain): started with the
// argument "sandcall-test-worker", it serves one job with a tiny scripted
// executor. A real server starts its own binary with "worker".
func ExamplePool() {
	exe, _ := os.Executable()
	pool, err := process.New(process.Config{Command: []string{exe, "sandcall-test-worker"}, Size: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	job := &sandbox.Job{Program: sandbox.Program{Source: "return [1,2,3]"}, Limits: sandbox.Limits{Timeout: 5 * time.Second}.Resolve()}
	out := pool.Execute(context.Background(), job, nil)
	fmt.Println(string(out.Value), out.Err)

	job = &sandbox.Job{Program: sandbox.Program{Source: "exit"}, Limits: sandbox.Limits{Timeout: 5 * time.Second}.Resolve()}
	out = pool.Execute(context.Background(), job, nil)
	fmt.Println(out.Err.Code)
	// Output:
	// [1,2,3] <nil>
	// E_WORKER_CRASHED
}
