package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// The addresses of make compare's targets and of its span sink.
var compareAddrs = map[string]string{
	"service":                "127.0.0.1:18080",
	"service-no-fast-path":   "127.0.0.1:18081",
	"service-before":         "127.0.0.1:18082",
	"service-traced":         "127.0.0.1:18083",
	"service-traced-sampled": "127.0.0.1:18084",
	"service-new":            "127.0.0.1:18085",
	"service-variant":        "127.0.0.1:18086",
	"naive":                  "127.0.0.1:18090",
	"static":                 "127.0.0.1:18091",
	"insertonly":             "127.0.0.1:18092",
	"naive-new":              "127.0.0.1:18093",
	"insertonly-new":         "127.0.0.1:18094",
}

const compareSinkAddr = "127.0.0.1:18099"

// contest is a make compare run: its settings, servers and targets.
type contest struct {
	cfg     compareConfig
	root    string
	work    string // .data/compare: the builds, the logs, bench/
	servers env
	hammer  hammer
	running running
	addr    map[string]string           // of the targets served
	proc    map[string]*lockenv.Process // of the targets served
}

// serve starts the span sink when tracing is on, then every contender.
func (c *contest) serve(ctx context.Context) error {
	c.addr, c.proc = map[string]string{}, map[string]*lockenv.Process{}
	if c.cfg.traced {
		sink, err := launch("otlpsink", filepath.Join(c.work, "otlpsink.log"), filepath.Join(c.root, "bin", "otlpsink"), "-addr", compareSinkAddr)
		if err != nil {
			return err
		}
		c.running.add(sink)
		if err := lockenv.AwaitListening(sink, compareSinkAddr, 10*time.Second); err != nil {
			return err
		}
	}
	for _, k := range c.cfg.contenders() {
		settings, err := c.databases(ctx, k)
		if err != nil {
			return err
		}
		bin, args := filepath.Join(c.root, "bin", "api"), []string{"serve"}
		switch k.binary {
		case "api-before":
			bin = filepath.Join(c.work, "api-before")
		case "baseline":
			bin, args = filepath.Join(c.work, "baseline"), nil
		}
		if err := c.start(k.name, append(settings, k.settings...), bin, args...); err != nil {
			return err
		}
	}
	return nil
}

// databases are the settings that give contender k its databases, made
// anew (none for a contender on make run's).
func (c *contest) databases(ctx context.Context, k contender) ([]string, error) {
	var settings []string
	if k.db != "" {
		url, err := freshDatabase(ctx, c.servers["DATABASE_URL"], k.db)
		if err != nil {
			return nil, err
		}
		settings = append(settings, "DATABASE_URL="+url)
	}
	if k.redisDB != 0 {
		url, err := freshRedis(ctx, c.servers["REDIS_URL"], k.redisDB)
		if err != nil {
			return nil, err
		}
		settings = append(settings, "REDIS_URL="+url)
	}
	return settings, nil
}

// start serves target name from bin with args and settings, on make run's
// servers unless the settings say otherwise; its log is work/NAME.log.
func (c *contest) start(name string, settings []string, bin string, args ...string) error {
	addr := compareAddrs[name]
	logPath := filepath.Join(c.work, name+".log")
	_ = os.Remove(logPath)
	p, err := devenv.Serve(name, logPath, append(c.servers.list(), settings...), addr, bin, args...)
	if err != nil {
		return err
	}
	c.running.add(p)
	c.addr[name], c.proc[name] = addr, p
	return nil
}
