package main

import (
	"fmt"
	"time"
)

// Defaults and bounds of -scenario platform: the platform's size, its
// reads and what they are judged against.
const (
	defaultPlatformSchedules = 10_000
	defaultPlatformStadiums  = 100
	defaultPlatformQueues    = 1_000
	maxPlatformSchedules     = 100_000
	// defaultHallSeats is a small hall's seats: enough to be a seat map,
	// few enough that ten thousand of them are made in minutes.
	defaultHallSeats = 10
	// defaultPlatformTime is both phases together, each half of it.
	defaultPlatformTime = time.Minute
	// defaultReadRate is the compact reads a second, in either phase.
	defaultReadRate = 200
	maxReadRate     = 10_000
	// defaultHallShare is the share of the reads of the many-schedules
	// phase that go to halls: a platform's browsers look at small events
	// too, and each read of a hall's map may load its image afresh.
	defaultHallShare = 0.1
	// defaultSetupWorkers make schedules at once: a stadium's 80,000 seats
	// are one transaction of the service's, and a few of them at once
	// already keep its database busy.
	defaultSetupWorkers = 4
	// defaultRSSLimitMiB is an instance's memory the platform must fit in.
	defaultRSSLimitMiB = 512
	// defaultP99Tolerance is how much worse than the one-schedule phase's
	// the many-schedules phase's p99 may be, as a share of it.
	defaultP99Tolerance = 0.1
)

// platformConfig is what -scenario platform makes and reads: Schedules
// schedules, Stadiums of them stadiums (StadiumVenue) and the rest halls
// of HallSeats seats; Queues of them with an open queue nobody joins
// (the stadiums' first); a watcher on every stadium's live seat map; and
// ReadRate compact reads a second, for half of -duration of one stadium
// only, then of all of them and (HallShare of the reads) of the halls.
type platformConfig struct {
	Schedules    int         `json:"schedules"`
	Stadiums     int         `json:"stadiums"`
	StadiumVenue venueConfig `json:"stadiumVenue"`
	HallSeats    int         `json:"hallSeats"`
	Queues       int         `json:"queues"`
	SetupWorkers int         `json:"setupWorkers"`
	// IDsFile keeps the ids of the schedules made, for the next run to
	// reuse: "" makes them all afresh.
	IDsFile string `json:"idsFile,omitempty"`
	// Keep leaves the queues open after the run.
	Keep      bool    `json:"keep,omitempty"`
	ReadRate  float64 `json:"readRate"`
	HallShare float64 `json:"hallShare"`
	// RSSLimitMiB bounds each process's resident memory; P99Tolerance is
	// the share by which the stadiums' p99 with every schedule read may
	// exceed the one-schedule p99.
	RSSLimitMiB  int     `json:"rssLimitMiB"`
	P99Tolerance float64 `json:"p99Tolerance"`
	PIDs         []int   `json:"pids"`
}

// halls is how many of the schedules are small halls.
func (c platformConfig) halls() int { return c.Schedules - c.Stadiums }

func definePlatform(f *flags) {
	cfg, p := f.cfg, &f.cfg.Platform
	f.Lookup("c").Usage = "the most compact reads in flight at once; a read due while they all are is skipped and fails the verdict"
	f.DurationVar(&cfg.Duration, "duration", defaultPlatformTime, "how long the reads go on: the first half of one stadium, the second of them all")
	f.IntVar(&p.Schedules, "schedules", defaultPlatformSchedules, fmt.Sprintf("the schedules on the service, stadiums and halls, 1..%d", maxPlatformSchedules))
	f.IntVar(&p.Stadiums, "stadiums", defaultPlatformStadiums, "how many of the -schedules are stadiums, each watched; at least 1")
	sections := f.Int("stadium-sections", defaultStadiumSections, "a stadium's sections")
	rows := f.Int("stadium-rows", defaultStadiumRows, "a stadium's rows in each section")
	rowSeats := f.Int("stadium-row-seats", defaultStadiumRowSeats, "a stadium's seats in each row")
	f.IntVar(&p.HallSeats, "hall-seats", defaultHallSeats, fmt.Sprintf("the seats of each hall, the schedules not stadiums, 1..%d", maxSeats))
	f.IntVar(&p.Queues, "queues", defaultPlatformQueues, fmt.Sprintf("how many of the -schedules (the stadiums first) get an open queue (admitPerSecond %d) nobody joins", idleAdmitRate))
	f.IntVar(&p.SetupWorkers, "setup-workers", defaultSetupWorkers, "schedules made, and watchers opened, at once")
	f.StringVar(&p.IDsFile, "ids-file", "", "reuse the schedules this file lists and write there the ids of those made; "+
		"a later run with the same file makes only what is missing; default none: all made afresh")
	f.BoolVar(&p.Keep, "keep", false, "leave the queues open after the run instead of deleting them")
	f.Float64Var(&p.ReadRate, "read-rate", defaultReadRate, fmt.Sprintf("compact seat-map reads a second, gzip asked, 1..%d", maxReadRate))
	f.Float64Var(&p.HallShare, "hall-share", defaultHallShare, "the share of the second phase's reads that go to halls, 0..1; the rest go round the stadiums")
	f.IntVar(&p.RSSLimitMiB, "rss-limit", defaultRSSLimitMiB, "the most resident memory (MiB) each process may reach, the verdict's bound")
	f.Float64Var(&p.P99Tolerance, "p99-tolerance", defaultP99Tolerance, "how much worse than the one-stadium phase's the second phase's p99 may be, a share of it")
	pids := f.processes("their resident memory (VmRSS of /proc/PID/status) every second; required")
	f.check(func() error {
		switch {
		case p.Schedules < 1 || p.Schedules > maxPlatformSchedules:
			return usagef("-schedules must be 1..%d", maxPlatformSchedules)
		case p.Stadiums < 1 || p.Stadiums > p.Schedules:
			return usagef("-stadiums must be 1..-schedules (%d)", p.Schedules)
		case p.HallSeats < 1 || p.HallSeats > maxSeats:
			return usagef("-hall-seats must be 1..%d", maxSeats)
		case p.Queues < 0 || p.Queues > p.Schedules:
			return usagef("-queues must be 0..-schedules (%d)", p.Schedules)
		case p.SetupWorkers < 1 || p.SetupWorkers > maxWorkers:
			return usagef("-setup-workers must be 1..%d", maxWorkers)
		case !(p.ReadRate >= 1 && p.ReadRate <= maxReadRate):
			return usagef("-read-rate must be 1..%d", maxReadRate)
		case !(p.HallShare >= 0 && p.HallShare <= 1):
			return usagef("-hall-share must be 0..1")
		case p.RSSLimitMiB < 1:
			return usagef("-rss-limit must be positive")
		case !(p.P99Tolerance >= 0):
			return usagef("-p99-tolerance must be 0 or more")
		case cfg.Duration < 2*time.Second:
			return usagef("-duration must be at least 2s, a second for each phase")
		}
		v, err := parseVenue(*rows, *rowSeats, *sections, "", "", map[string]bool{})
		if err != nil {
			return usagef("the stadium: %v", err)
		}
		p.StadiumVenue = v
		if p.PIDs, err = pids(); err != nil {
			return err
		}
		if len(p.PIDs) == 0 {
			return usagef("-pids or -pid-files is required: the service's memory is what the scenario measures")
		}
		return nil
	})
}
