package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// report prints the run's settings, benchstat's tables over its rounds,
// the service's peak memory and, with tracing on, the spans exported.
func (c *contest) report(ctx context.Context) error {
	cfg := c.cfg
	fmt.Printf("\n%d connections, %d users, %s per run (contended: 200 seats x 20, three runs a round; fresh-new: %d bookings), %d rounds\n",
		cfg.conns, cfg.users, cfg.duration, cfg.freshNewBookings, cfg.rounds)
	fmt.Printf("\nbenchstat: the runs of the %d rounds, the service against the naive flow and the limits", cfg.rounds)
	if cfg.before != "" {
		fmt.Printf(", after against before (%s)", cfg.before)
	}
	if cfg.has("hot-seat") {
		fmt.Print(", the fast path on against off")
	}
	if len(cfg.variant) > 0 {
		fmt.Print(", the variant against the service")
	}
	if cfg.traced {
		fmt.Print(", tracing against none")
	}
	fmt.Println()
	for _, table := range cfg.tables() {
		if err := c.benchstat(ctx, table); err != nil {
			return err
		}
	}
	// The instances' peak memory over every run they served (the kernel's
	// high-water mark of their resident set, executable pages included).
	fmt.Printf("\nPeak RSS (VmHWM) of the service: %s", status(c.proc["service"].Pid(), "VmHWM"))
	if cfg.before != "" {
		fmt.Printf("; as built from %s: %s", cfg.before, status(c.proc["service-before"].Pid(), "VmHWM"))
	}
	fmt.Println(".")
	if cfg.traced {
		spans, err := get(ctx, "http://"+compareSinkAddr+"/spans")
		if err != nil {
			return fmt.Errorf("the span sink's count: %w", err)
		}
		fmt.Printf("\nThe traced services exported %s spans to the sink.\n", strings.TrimSpace(spans))
	}
	return nil
}

// tables are benchstat's comparisons, each LABEL=TARGET, the first target
// the base the others are set against.
func (cfg compareConfig) tables() [][]string {
	tables := [][]string{{"naive=naive", "service=service"}}
	if cfg.has("hot-seat") {
		tables = append(tables, []string{"static=static", "service=service"})
	}
	if cfg.has("fresh-seats") {
		tables = append(tables, []string{"insertonly=insertonly", "service=service"})
	}
	if cfg.has("fresh-new") {
		tables = append(tables, []string{"naive=naive-new", "service=service-new", "insertonly=insertonly-new"})
	}
	if cfg.before != "" {
		tables = append(tables, []string{"before=service-before", "after=service"})
	}
	if cfg.has("hot-seat") {
		tables = append(tables, []string{"fast-path-off=service-no-fast-path", "fast-path-on=service"})
	}
	if len(cfg.variant) > 0 {
		tables = append(tables, []string{"service=service", "variant=service-variant"})
	}
	if cfg.traced {
		tables = append(tables, []string{"off=service", "every-request=service-traced", "1%=service-traced-sampled"})
	}
	return tables
}

// benchstat prints one table after a blank line; none when a target of it
// ran no scenario (the naive flow with fresh-new alone).
func (c *contest) benchstat(ctx context.Context, table []string) error {
	var columns []column
	for _, pair := range table {
		label, target, _ := strings.Cut(pair, "=")
		file := filepath.Join(c.work, "bench", target+".txt")
		if _, err := os.Stat(file); err != nil {
			return nil
		}
		columns = append(columns, column{label, file})
	}
	fmt.Println()
	return benchstat(ctx, c.root, columns...)
}
