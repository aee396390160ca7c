package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// scrape returns the Prometheus text of http://addr/metrics (an instance's
// METRICS_ADDR).
func scrape(ctx context.Context, addr string) (string, error) {
	return get(ctx, "http://"+addr+"/metrics")
}

// get returns the body of url's 200 answer.
func get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), err
}

// sample is the value of the sample named exactly name (no labels), as
// the text gives it; empty when there is none.
func sample(metrics, name string) string {
	for line := range strings.Lines(metrics) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}

// sum adds up every sample of the metric family name, whatever its labels.
func sum(metrics, name string) float64 {
	var total float64
	for line := range strings.Lines(metrics) {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != name && !strings.HasPrefix(f[0], name+"{")) {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			total += v
		}
	}
	return total
}
