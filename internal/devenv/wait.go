package devenv

import (
	"context"
	"fmt"
	"time"
)

// awaitTrue polls ready every interval until it reports true; when ctx
// ends first it returns the last error ready gave, or ctx's.
func awaitTrue(ctx context.Context, interval time.Duration, ready func() (bool, error)) error {
	for {
		ok, err := ready()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return err
			}
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// waitFor polls ready every 50 ms; it fails after within saying what did
// not happen.
func waitFor(within time.Duration, what string, ready func() bool) error {
	for deadline := time.Now().Add(within); !ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %v", what, within)
		}
	}
	return nil
}
