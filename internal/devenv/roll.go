package devenv

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Roll restarts the instances of the cluster running under DIR one by
// one: each gets SIGTERM, drains and exits, is started again (from bin)
// and is ready before the next one goes; say is told how long each took.
func Roll(dir, bin string, say io.Writer) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(clusterState(dir), "haproxy.pid")); err != nil {
		return fmt.Errorf("no cluster runs under %s: make cluster first", dir)
	}
	for n := 1; n <= clusterInstances; n++ {
		began := time.Now()
		in := instance{dir, n}
		if err := stopInstances(in); err != nil {
			return err
		}
		if err := in.restart(bin); err != nil {
			return err
		}
		logf(say, "cluster", "instance %d restarted and ready in %d s", n, int(time.Since(began).Seconds()))
		// HAProxy puts it back after two good checks.
		time.Sleep(1500 * time.Millisecond)
	}
	return nil
}
