// Command devenv is the service's local topology: make run, make smoke.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seatlock/seatlock/internal/devenv"
)

func main() {
	if err := dispatch(os.Args[1:]); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		logf("devenv", "%v", err)
		os.Exit(1)
	}
}

func dispatch(args []string) error {
	if len(args) < 1 {
		return usage()
	}
	cmd, rest := args[0], args[1:]
	dir := ""
	if len(rest) > 0 {
		abs, err := filepath.Abs(rest[0])
		if err != nil {
			return err
		}
		dir = abs
	}
	switch {
	case cmd == "run" && dir != "":
		return run(dir)
	case cmd == "smoke" && dir != "":
		return smoke(dir)
	case cmd == "served-addr" && dir != "":
		fmt.Println(devenv.ServedAddr(dir))
		return nil
	}
	return usage()
}

func usage() error { return exitCode(2) }

func logf(who, format string, args ...any) {
	fmt.Fprintf(os.Stderr, who+": "+format+"\n", args...)
}
