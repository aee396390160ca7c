// Package devenv is the service's local topology, built on lockenv.
package devenv

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// AwaitReady waits up to within until http://addr/readyz answers 200: the
// service, or HAProxy in front of its instances, takes requests. Each
// attempt may take a second (an instance busy starting may be slow to
// answer); the error names the last answer, or why there was none.
func AwaitReady(addr string, within time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	url := "http://" + addr + "/readyz"
	deadline := time.Now().Add(within)
	for {
		last := ""
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s did not answer 200 within %v (last: %s)", url, within, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
