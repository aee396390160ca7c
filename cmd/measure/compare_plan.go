package main

import (
	"fmt"
	"path/filepath"
	"slices"
)

// compareConfig is make compare's settings, from the environment.
type compareConfig struct {
	rounds, users, conns int
	duration             string // as the hammer's -duration takes it
	clients, scenarios   []string
	freshNewBookings     int
	baselineDir, before  string
	variant              []string // NAME=VALUE settings of service-variant
	traced, pgha         bool
}

func compareSettings(root string) (compareConfig, error) {
	cfg := compareConfig{
		duration:    setting("DURATION", "5s"),
		clients:     words("CLIENTS", "fasthttp nethttp"),
		scenarios:   words("SCENARIOS", "hot-seat fresh-seats contended"),
		baselineDir: setting("BASELINE_DIR", filepath.Join(root, "..", "shared", "baseline")),
		before:      setting("BEFORE", ""),
		variant:     words("VARIANT", ""),
		traced:      on("TRACED"),
		pgha:        on("PGHA"),
	}
	var errs [4]error
	cfg.rounds, errs[0] = count("ROUNDS", 10)
	cfg.users, errs[1] = count("USERS", 2000)
	cfg.conns, errs[2] = count("CONNECTIONS", 64)
	cfg.freshNewBookings, errs[3] = count("FRESH_NEW_BOOKINGS", 8000)
	for _, err := range errs {
		if err != nil {
			return cfg, err
		}
	}
	if len(cfg.clients) == 0 || len(cfg.scenarios) == 0 {
		return cfg, fmt.Errorf("CLIENTS and SCENARIOS name at least one each")
	}
	return cfg, nil
}

// has is whether the run measures scenario.
func (cfg compareConfig) has(scenario string) bool { return slices.Contains(cfg.scenarios, scenario) }

// targets are the instances that run scenario: the service, against the
// naive flow and the limits that bound it, and the extra builds and
// settings asked for.
func (cfg compareConfig) targets(scenario string) []string {
	var extra []string
	if cfg.before != "" {
		extra = append(extra, "service-before")
	}
	if cfg.traced {
		extra = append(extra, "service-traced", "service-traced-sampled")
	}
	if len(cfg.variant) > 0 {
		extra = append(extra, "service-variant")
	}
	switch scenario {
	case "hot-seat":
		return append([]string{"naive", "static", "service", "service-no-fast-path"}, extra...)
	case "fresh-seats":
		return append([]string{"naive", "insertonly", "service"}, extra...)
	case "fresh-new":
		return []string{"naive-new", "insertonly-new", "service-new"}
	default:
		return append([]string{"naive", "service"}, extra...)
	}
}

// contender is an instance make compare serves: the service as built
// (binary "api") or from BEFORE ("api-before"), or the shared baseline
// ("baseline").
type contender struct {
	name     string
	binary   string
	db       string // its own PostgreSQL database, made anew; "" for make run's
	redisDB  int    // its own Redis database, emptied; 0 for make run's
	settings []string
}

// contenders are the instances the run serves. Every contender that
// books does so on a database made anew for the run (and the service on
// a Redis database emptied for it): on the long-lived database of make
// run, grown by every earlier run, the service booked fresh seats 0.87
// times as fast as the same code on a new one. Each instance of the
// service has databases of its own, as a deployment of its own would (see
// own). The build before has them too, for it may know fewer migrations
// than the one measured has applied, or than the build before of an
// earlier run applied to its database.
func (cfg compareConfig) contenders() []contender {
	list := []contender{
		{name: "service", binary: "api", db: "compare_service", redisDB: 2},
		{name: "service-no-fast-path", binary: "api", db: "compare_service_no_fast_path", redisDB: 4, settings: []string{"FAST_PATH=false"}},
	}
	if cfg.before != "" {
		list = append(list, contender{name: "service-before", binary: "api-before", db: "service_before", redisDB: 1})
	}
	if len(cfg.variant) > 0 {
		list = append(list, contender{name: "service-variant", binary: "api", db: "compare_service_variant", redisDB: 5, settings: cfg.variant})
	}
	if cfg.traced {
		otlp := []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + compareSinkAddr}
		sampled := append(slices.Clip(otlp), "OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0.01")
		list = append(list,
			contender{name: "service-traced", binary: "api", db: "compare_service_traced", redisDB: 6, settings: otlp},
			contender{name: "service-traced-sampled", binary: "api", db: "compare_service_sampled", redisDB: 7, settings: sampled})
	}
	list = append(list,
		contender{name: "naive", binary: "baseline", db: "baseline_naive"},
		contender{name: "static", binary: "baseline", settings: []string{"BASELINE_MODE=static"}},
		contender{name: "insertonly", binary: "baseline", db: "baseline_insert", settings: []string{"BASELINE_MODE=insertonly"}})
	if cfg.has("fresh-new") {
		list = append(list,
			contender{name: "service-new", binary: "api", db: "compare_service_new", redisDB: 3},
			contender{name: "naive-new", binary: "baseline", db: "baseline_naive_new"},
			contender{name: "insertonly-new", binary: "baseline", db: "baseline_insert_new", settings: []string{"BASELINE_MODE=insertonly"}})
	}
	return list
}

// args are the hammer's arguments for a measured run of scenario.
func (cfg compareConfig) args(scenario string) []string {
	switch scenario {
	case "contended":
		return []string{"-seats", "200", "-per-seat", "20"}
	case "fresh-new":
		return []string{"-scenario", "fresh-seats", "-n", fmt.Sprint(cfg.freshNewBookings)}
	default:
		return []string{"-duration", cfg.duration}
	}
}

// warmupArgs are the hammer's arguments for the warm-up run of scenario:
// a few seconds at most, and few bookings on the new databases.
func warmupArgs(scenario string) []string {
	switch scenario {
	case "contended":
		return []string{"-seats", "50", "-per-seat", "4"}
	case "fresh-new":
		return []string{"-scenario", "fresh-seats", "-n", "500"}
	default:
		return []string{"-duration", "1s"}
	}
}

// runsOf is how many runs of scenario a round makes: a contended run is
// short (4,000 requests), so three.
func runsOf(scenario string) int {
	if scenario == "contended" {
		return 3
	}
	return 1
}
