package devenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The checks on a Patroni node's REST API (http://host:port), which
// `make cluster`, its drills and the tests' Patroni pairs wait on.

var restClient = &http.Client{Timeout: time.Second}

// status returns the status code url answers GET with, or 0.
func status(url string) int {
	resp, err := restClient.Get(url)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Leads reports whether the node whose REST API is rest leads: it answers
// /primary with 200, which only the running primary holding the leader
// key does.
func Leads(rest string) bool { return status(rest+"/primary") == http.StatusOK }

// SyncStandby reports whether node name, whose REST API is rest, is the
// synchronous standby of the leader whose REST API is leader and streams
// from it: Patroni names it so (its /sync answers 200; only then may a
// switchover name it or a failover promote it), and the leader's
// pg_stat_replication shows it streaming with sync_state sync (commits
// wait for it).
func SyncStandby(rest, name, leader string) bool {
	if status(rest+"/sync") != http.StatusOK {
		return false
	}
	var st struct {
		Replication []struct {
			Name      string `json:"application_name"`
			State     string `json:"state"`
			SyncState string `json:"sync_state"`
		} `json:"replication"`
	}
	resp, err := restClient.Get(leader + "/patroni")
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return false
	}
	for _, r := range st.Replication {
		if r.Name == name && r.State == "streaming" && r.SyncState == "sync" {
			return true
		}
	}
	return false
}

// Switchover asks the leader (its REST API, its name) for a planned
// switchover to candidate: the leader stops, the candidate is promoted
// once it has every commit, and the old leader follows it. Patroni answers
// once the switchover is done, or failed.
func Switchover(ctx context.Context, rest, leader, candidate string) error {
	body := fmt.Sprintf(`{"leader":%q,"candidate":%q}`, leader, candidate)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rest+"/switchover", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("switchover from %s to %s: %w", leader, candidate, err)
	}
	text, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("switchover from %s to %s: %d %s", leader, candidate, resp.StatusCode, text)
	}
	return nil
}

// EtcdHealthy reports whether the etcd serving clients on client
// (host:port) says it is healthy.
func EtcdHealthy(client string) bool {
	resp, err := restClient.Get("http://" + client + "/health")
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	var h struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&h) == nil && h.Health == "true"
}
