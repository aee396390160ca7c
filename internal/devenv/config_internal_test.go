package devenv

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// make cluster's HAProxy configuration is one HAProxy accepts, its
// instances checked and again as unchecked backups.
func TestHAProxyConfigPassesHAProxysCheck(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not found: `make test` installs it (go run ./cmd/devenv haproxy)")
	}
	dir := t.TempDir()
	errorfile := filepath.Join(dir, "503.http")
	if err := os.WriteFile(errorfile, []byte(UnavailableResponse()), 0o644); err != nil {
		t.Fatal(err)
	}
	instances := []string{"127.0.0.1:24001", "127.0.0.1:24002", "127.0.0.1:24003"}
	text := HAProxyConfig("127.0.0.1:24000", errorfile, instances)
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("haproxy", "-c", "-f", cfg).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	for i, a := range instances {
		for _, want := range []string{
			"server api" + string(rune('1'+i)) + " " + a + " check\n",
			"server api" + string(rune('1'+i)) + "-spare " + a + " backup\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the configuration has no line %q", strings.TrimSpace(want))
			}
		}
	}
}

// The 503 HAProxy answers itself is a whole HTTP response: its
// Content-Length is its body's.
func TestUnavailableResponseIsWhole(t *testing.T) {
	head, body, ok := strings.Cut(UnavailableResponse(), "\r\n\r\n")
	if !ok {
		t.Fatal("no blank line between the head and the body")
	}
	if want := "Content-Length: " + strconv.Itoa(len(body)); !strings.Contains(head, want) {
		t.Errorf("head %q lacks %q", head, want)
	}
	var problem struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal([]byte(body), &problem); err != nil || problem.Status != 503 || problem.Code != "unavailable" {
		t.Errorf("body %s: %+v, %v", body, problem, err)
	}
}

// A Patroni node's configuration, read by PyYAML as Patroni reads it,
// says what it was given: the ports, the directories, passwords that stay
// strings (all digits too), and fsync off only when asked.
func TestPatroniConfigReadsAsGiven(t *testing.T) {
	c := PatroniConfig{Name: "pg2", Addr: "127.0.0.1:25001", REST: "127.0.0.1:25002", Etcd: "127.0.0.1:25003",
		DataDir: "/data/pg2", BinDir: "/usr/lib/postgresql/15/bin", PGPass: "/data/pgpass-pg2",
		Superuser: "123456", Replication: "true", Rewind: "it's"}
	for _, noFsync := range []bool{false, true} {
		c.NoFsync = noFsync
		var y struct {
			Scope   string
			Name    string
			Restapi struct {
				Listen         string
				ConnectAddress string `json:"connect_address"`
			}
			Etcd3     struct{ Hosts string }
			Bootstrap struct {
				DCS struct {
					TTL             int  `json:"ttl"`
					SynchronousMode bool `json:"synchronous_mode"`
					Postgresql      struct {
						Parameters map[string]any
					}
				} `json:"dcs"`
			}
			Postgresql struct {
				Listen         string
				ConnectAddress string `json:"connect_address"`
				DataDir        string `json:"data_dir"`
				BinDir         string `json:"bin_dir"`
				Pgpass         string
				Authentication map[string]struct{ Username, Password any }
			}
		}
		cmd := exec.Command("python3", "-c", "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)")
		cmd.Stdin = strings.NewReader(c.YAML())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("PyYAML (Patroni's parser; `make test` installs Patroni): %v\n%s", err, c.YAML())
		}
		if err := json.Unmarshal(out, &y); err != nil {
			t.Fatal(err)
		}
		p := y.Postgresql
		if y.Scope != PatroniScope || y.Name != c.Name || y.Restapi.Listen != c.REST || y.Restapi.ConnectAddress != c.REST ||
			y.Etcd3.Hosts != c.Etcd || p.Listen != c.Addr || p.ConnectAddress != c.Addr || p.DataDir != c.DataDir ||
			p.BinDir != c.BinDir || p.Pgpass != c.PGPass || y.Bootstrap.DCS.TTL != 8 || !y.Bootstrap.DCS.SynchronousMode {
			t.Errorf("read back %+v from:\n%s", y, c.YAML())
		}
		for user, want := range map[string]string{"superuser": c.Superuser, "replication": c.Replication, "rewind": c.Rewind} {
			if got := p.Authentication[user].Password; got != want {
				t.Errorf("%s's password reads as %#v, want the string %q", user, got, want)
			}
		}
		fsync, set := y.Bootstrap.DCS.Postgresql.Parameters["fsync"]
		if set != noFsync || set && fsync != "off" {
			t.Errorf("NoFsync %v: fsync %#v (set: %v)", noFsync, fsync, set)
		}
	}
}

// A daemonized Sentinel records its pid and log in its directory; one in
// the foreground logs to its output.
func TestSentinelConf(t *testing.T) {
	c := SentinelConf{Port: 26001, Dir: "/s/1", MasterPort: 26000}
	for _, want := range []string{"port 26001\n", "daemonize no\n", "dir /s/1\n", "sentinel monitor seatlock 127.0.0.1 26000 2\n"} {
		if !strings.Contains(c.Text(), want) {
			t.Errorf("foreground conf lacks %q:\n%s", want, c.Text())
		}
	}
	if strings.Contains(c.Text(), "pidfile") || strings.Contains(c.Text(), "logfile") {
		t.Errorf("a foreground Sentinel names a pid or log file:\n%s", c.Text())
	}
	c.Daemonize = true
	for _, want := range []string{"daemonize yes\n", "pidfile /s/1/sentinel.pid\n", "logfile /s/1/sentinel.log\n"} {
		if !strings.Contains(c.Text(), want) {
			t.Errorf("daemon conf lacks %q:\n%s", want, c.Text())
		}
	}
}
