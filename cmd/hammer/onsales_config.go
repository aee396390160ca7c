package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Defaults and bounds of -scenario on-sales.
const (
	// defaultSchedules: the platform's target, 40 on-sales at once.
	defaultSchedules = 40
	maxSchedules     = 10_000
	maxIdleQueues    = 100_000
	// The stadium -stadium makes of the first schedule: 100 sections of
	// 20 rows of 40 seats, with defaultStadiumScale times the buyers and
	// the admission rate of a hall.
	defaultStadiumSections = 100
	defaultStadiumRows     = 20
	defaultStadiumRowSeats = 40
	defaultStadiumScale    = 10
	// idleAdmitRate is the admitPerSecond of an idle queue: one that
	// would admit at once anybody who came.
	idleAdmitRate = 100
)

// onSalesConfig is what -scenario on-sales runs beside -scenario
// on-sale's settings (config.OnSale, each hall's): Schedules on-sales at
// once, the first a stadium (StadiumVenue, StadiumScale times the buyers
// and the rate) with Stadium; IdleQueues more schedules with an open
// queue and nobody in it (kept after the run with Keep); and what to
// sample for CPU: Redis at RedisURL, the processes PIDs.
type onSalesConfig struct {
	Schedules    int         `json:"schedules"`
	Stadium      bool        `json:"stadium"`
	StadiumVenue venueConfig `json:"stadiumVenue,omitzero"`
	StadiumScale int         `json:"stadiumScale,omitempty"`
	// StadiumMaxActive is the stadium queue's maxActive (0: the halls'
	// -max-active).
	StadiumMaxActive int  `json:"stadiumMaxActive,omitempty"`
	IdleQueues       int  `json:"idleQueues"`
	Keep             bool `json:"keep,omitempty"`
	// RedisURL may hold a password: never in the report.
	RedisURL string `json:"-"`
	PIDs     []int  `json:"pids,omitempty"`
}

// stadiumSale is the stadium's on-sale: hall's, on the stadium's venue
// at StadiumScale times the rate, capped by StadiumMaxActive when given.
func (c onSalesConfig) stadiumSale(hall onSaleConfig) onSaleConfig {
	s := hall
	s.venueConfig = c.StadiumVenue
	s.AdmitRate = hall.AdmitRate * c.StadiumScale
	if c.StadiumMaxActive > 0 {
		s.MaxActive = c.StadiumMaxActive
	}
	return s
}

// buyers is how many buyers the on-sales have in all, users a hall.
func (c onSalesConfig) buyers(users int) int {
	n := c.Schedules * users
	if c.Stadium {
		n += (c.StadiumScale - 1) * users
	}
	return n
}

func defineOnSales(f *flags) {
	cfg, m := f.cfg, &f.cfg.OnSales
	f.DurationVar(&cfg.Duration, "duration", 0, "the most the sales may last from the first join; default -join-window + twice -users ÷ -admit-rate + "+
		onSaleSlack.String()+"; with -schedules 0, how long the idle queues (or the service at rest) are measured (required)")
	f.onSale("the buyers of each schedule, each joining its queue once")
	f.IntVar(&m.Schedules, "schedules", defaultSchedules, fmt.Sprintf("on-sales at once, each a fresh venue of its own with its own queue and buyers, 0..%d", maxSchedules))
	f.BoolVar(&m.Stadium, "stadium", false, "make the first schedule a stadium (-stadium-sections × -stadium-rows × -stadium-row-seats) "+
		"with -stadium-scale times the buyers and the admission rate")
	sections := f.Int("stadium-sections", defaultStadiumSections, "the stadium's sections")
	rows := f.Int("stadium-rows", defaultStadiumRows, "the stadium's rows in each section")
	rowSeats := f.Int("stadium-row-seats", defaultStadiumRowSeats, "the stadium's seats in each row")
	f.IntVar(&m.StadiumScale, "stadium-scale", defaultStadiumScale, "the stadium's buyers and admission rate, times a hall's")
	f.IntVar(&m.StadiumMaxActive, "stadium-max-active", 0, fmt.Sprintf("the stadium queue's maxActive, the most of its buyers admitted at once, 1..%d; 0: as -max-active", maxActiveCap))
	f.IntVar(&m.IdleQueues, "idle-queues", 0, fmt.Sprintf("more schedules with a queue open (admitPerSecond %d) and nobody in it, made before the run, 0..%d",
		idleAdmitRate, maxIdleQueues))
	f.BoolVar(&m.Keep, "keep", false, "keep the idle queues after the run instead of deleting them")
	f.StringVar(&m.RedisURL, "redis-url", "", "the service's Redis (a redis:// URL), to report its CPU and commands a second (INFO); default none")
	pids := f.processes("their CPU (/proc/PID/stat); default none")
	f.check(func() error {
		switch {
		case m.Schedules < 0 || m.Schedules > maxSchedules:
			return usagef("-schedules must be 0..%d", maxSchedules)
		case m.IdleQueues < 0 || m.IdleQueues > maxIdleQueues:
			return usagef("-idle-queues must be 0..%d", maxIdleQueues)
		case m.Schedules == 0 && !f.given["duration"]:
			return usagef("-schedules 0 measures the -idle-queues (or, with none, the service at rest) for -duration: give it")
		case m.Stadium && m.Schedules == 0:
			return usagef("-stadium makes one of the -schedules a stadium: give at least one")
		case m.StadiumScale < 1:
			return usagef("-stadium-scale must be positive")
		case m.StadiumMaxActive < 0 || m.StadiumMaxActive > maxActiveCap:
			return usagef("-stadium-max-active must be 0..%d", maxActiveCap)
		case m.StadiumMaxActive > 0 && !m.Stadium:
			return usagef("-stadium-max-active caps the stadium's queue: give -stadium")
		case m.buyers(cfg.Users) > maxUsers:
			return usagef("the buyers of every schedule (%d) must be at most %d", m.buyers(cfg.Users), maxUsers)
		}
		if m.Stadium {
			v, err := parseVenue(*rows, *rowSeats, *sections, "", cfg.OnSale.Category, map[string]bool{})
			if err != nil {
				return usagef("the stadium: %v", err)
			}
			m.StadiumVenue = v
			if rate := cfg.OnSale.AdmitRate * m.StadiumScale; rate > maxAdmitRate {
				return usagef("the stadium's rate, -admit-rate × -stadium-scale (%d), must be at most %d", rate, maxAdmitRate)
			}
		}
		var err error
		m.PIDs, err = pids()
		return err
	})
}

// processes defines -pids and -pid-files, the service's processes the
// scenario samples to report what (said after "to report"); the returned
// func reads them once the flags are parsed.
func (f *flags) processes(what string) func() ([]int, error) {
	pids := f.String("pids", "", "the service's processes, comma-separated pids, to report "+what)
	pidFiles := f.String("pid-files", "", "as -pids, the pids these files name (comma-separated paths or globs: make cluster's "+
		".data/run/cluster/api-*.pid, make run's .data/run/api/*.pid)")
	return func() ([]int, error) {
		fromFlag, err := parsePIDs(*pids)
		if err != nil {
			return nil, usagef("-pids: %v", err)
		}
		fromFiles, err := readPIDFiles(*pidFiles)
		if err != nil {
			return nil, usagef("-pid-files: %v", err)
		}
		return append(fromFlag, fromFiles...), nil
	}
}

// parsePIDs reads a comma-separated list of pids.
func parsePIDs(list string) ([]int, error) {
	var pids []int
	for field := range strings.SplitSeq(list, ",") {
		if field = strings.TrimSpace(field); field == "" {
			continue
		}
		pid, err := strconv.Atoi(field)
		if err != nil || pid < 1 {
			return nil, fmt.Errorf("%q is not a pid", field)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// readPIDFiles reads the pid each file of a comma-separated list of paths
// or globs names (its first line); a pattern that matches nothing is an
// error, as the service it meant is not running.
func readPIDFiles(list string) ([]int, error) {
	var pids []int
	for pattern := range strings.SplitSeq(list, ",") {
		if pattern = strings.TrimSpace(pattern); pattern == "" {
			continue
		}
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			return nil, fmt.Errorf("no pid file %s", pattern)
		}
		for _, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			first, _, _ := strings.Cut(string(b), "\n")
			got, err := parsePIDs(first)
			if err != nil || len(got) != 1 {
				return nil, fmt.Errorf("%s names no pid", path)
			}
			pids = append(pids, got...)
		}
	}
	return pids, nil
}
