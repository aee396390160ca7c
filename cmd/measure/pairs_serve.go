package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// pairsConfig is make pairs' settings, from the environment.
type pairsConfig struct {
	specs     []string // NAME=REVISION[,VAR=VALUE...]
	scenarios []string
	rounds    int
	users     int
	client    string
	duration  string // as the hammer's -duration takes it
}

func pairsSettings() (pairsConfig, error) {
	cfg := pairsConfig{
		specs:     words("INSTANCES", "before=HEAD after=."),
		scenarios: words("SCENARIOS", "hot-seat fresh-seats"),
		client:    setting("CLIENT", "fasthttp"),
		duration:  setting("DURATION", "5s"),
	}
	var err error
	if cfg.rounds, err = count("ROUNDS", 10); err != nil {
		return cfg, err
	}
	if cfg.users, err = count("USERS", 2000); err != nil {
		return cfg, err
	}
	for _, spec := range cfg.specs {
		if name, revision, _ := strings.Cut(spec, "="); name == "" || revision == "" {
			return cfg, fmt.Errorf("INSTANCES: %q is not NAME=REVISION[,VAR=VALUE...]", spec)
		}
	}
	// Redis databases 1-15 are the instances', one each.
	if len(cfg.specs) > 15 {
		return cfg, fmt.Errorf("at most 15 instances: each has a Redis database of its own")
	}
	return cfg, nil
}

// spec is one NAME=REVISION[,VAR=VALUE...] of INSTANCES.
type spec struct {
	name, revision string
	settings       []string // "traced" in INSTANCES stands for tracedSettings
}

func parseSpec(text string) spec {
	name, rest, _ := strings.Cut(text, "=")
	parts := strings.Split(rest, ",")
	s := spec{name: name, revision: parts[0]}
	for _, setting := range parts[1:] {
		if setting == "traced" {
			s.settings = append(s.settings, tracedSettings...)
		} else {
			s.settings = append(s.settings, setting)
		}
	}
	return s
}

// database is the name of the instance's own PostgreSQL database.
func (s spec) database() string {
	return "pairs_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s.name)
}

// tracedSettings stand for the setting "traced": tracing sampled at 1%,
// exporting over OTLP to the span sink.
var tracedSettings = []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + pairsSinkAddr,
	"OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0.01"}

const pairsSinkAddr = "127.0.0.1:18499"

// instance is one build or setting of the service a pairs run serves.
type instance struct {
	name string
	addr string
	proc *lockenv.Process
}

// bout is a make pairs run: its settings, servers and instances.
type bout struct {
	cfg       pairsConfig
	root      string
	work      string // .data/pairs: the builds, the logs, the runs
	servers   env
	hammer    hammer
	running   running
	instances []instance        // in INSTANCES' order
	built     map[string]string // the service's binary by commit
}

func (b *bout) names() []string {
	var names []string
	for _, in := range b.instances {
		names = append(names, in.name)
	}
	return names
}

func (b *bout) byName(name string) instance {
	i := slices.IndexFunc(b.instances, func(in instance) bool { return in.name == name })
	return b.instances[i]
}

// serve starts every instance of INSTANCES, the nth on port 18500 + 2n
// (its metrics on the next), on databases of its own.
func (b *bout) serve(ctx context.Context) error {
	if slices.ContainsFunc(b.cfg.specs, func(text string) bool { return slices.Contains(strings.Split(text, ","), "traced") }) {
		if err := b.startSink(ctx); err != nil {
			return err
		}
	}
	for n, text := range b.cfg.specs {
		n++
		spec := parseSpec(text)
		bin, err := b.binary(ctx, spec.revision)
		if err != nil {
			return err
		}
		settings, err := own(ctx, b.servers, spec.database(), n)
		if err != nil {
			return err
		}
		settings = append(settings, spec.settings...)
		port := 18500 + 2*n
		settings = append(settings, fmt.Sprintf("METRICS_ADDR=127.0.0.1:%d", port+1))
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		logPath := filepath.Join(b.work, spec.name+".log")
		_ = os.Remove(logPath)
		p, err := devenv.Serve(spec.name, logPath, append(b.servers.list(), settings...), addr, bin, "serve")
		if err != nil {
			return err
		}
		b.running.add(p)
		b.instances = append(b.instances, instance{name: spec.name, addr: addr, proc: p})
	}
	return nil
}

func (b *bout) startSink(ctx context.Context) error {
	bin := filepath.Join(b.root, "bin", "otlpsink")
	if err := goBuild(ctx, b.root, bin, "./tools/otlpsink"); err != nil {
		return err
	}
	sink, err := launch("otlpsink", filepath.Join(b.work, "sink.log"), bin, "-addr", pairsSinkAddr)
	if err != nil {
		return err
	}
	b.running.add(sink)
	return lockenv.AwaitListening(sink, pairsSinkAddr, 10*time.Second)
}

// binary is the service as built from revision ("." the working tree's
// bin/api), each commit built once, into work/api-COMMIT.
func (b *bout) binary(ctx context.Context, revision string) (string, error) {
	if revision == "." {
		return filepath.Join(b.root, "bin", "api"), nil
	}
	out, err := exec.CommandContext(ctx, "git", "-C", b.root, "rev-parse", "--short", revision+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", revision, err)
	}
	commit := strings.TrimSpace(string(out))
	if bin, ok := b.built[commit]; ok {
		return bin, nil
	}
	bin := filepath.Join(b.work, "api-"+commit)
	if err := buildRevision(ctx, b.root, commit, b.work, bin); err != nil {
		return "", err
	}
	if b.built == nil {
		b.built = map[string]string{}
	}
	b.built[commit] = bin
	return bin, nil
}
