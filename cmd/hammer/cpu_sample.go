package main

// What a run costs the machine, a second at a time: Redis's CPU and the
// commands it ran (INFO cpu and stats, of -redis-url) and the CPU of the
// service's processes (/proc/PID/stat of -pids and -pid-files). Read
// once a second while the run goes on; the report gives each figure's
// mean over the run and its busiest second.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// clockTicks is the unit of /proc/PID/stat's times: USER_HZ, 100 on
// every Linux the service runs on.
const clockTicks = 100

// cpuInterval is how often the sampler reads.
const cpuInterval = time.Second

// cpuReading is one reading: Redis's CPU time (seconds, system and user)
// and commands processed since it started, when RedisOK; the processes'
// CPU time (clock ticks, summed), when ProcOK (every process read).
type cpuReading struct {
	At            time.Time
	RedisOK       bool
	RedisCPU      float64
	RedisCommands int64
	ProcOK        bool
	ProcTicks     int64
}

// cpuSampler reads the figures it can: Redis when redis is not nil, the
// processes pids (under procRoot, /proc but in tests).
type cpuSampler struct {
	redis    *redis.Client
	pids     []int
	procRoot string
}

// newCPUSampler connects to redisURL ("" for none) and checks that it and
// every pid can be read before the run starts.
func newCPUSampler(ctx context.Context, redisURL string, pids []int) (*cpuSampler, error) {
	c := &cpuSampler{pids: pids, procRoot: "/proc"}
	if redisURL != "" {
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			// The parser's message would quote the URL, password and all.
			return nil, errors.New("-redis-url: not a redis:// URL")
		}
		opt.PoolSize = 1
		c.redis = redis.NewClient(opt)
	}
	r, err := c.read(ctx)
	switch {
	case err != nil:
		c.close()
		return nil, err
	case c.redis != nil && !r.RedisOK, len(pids) > 0 && !r.ProcOK:
		c.close()
		return nil, errors.New("cpu: first reading incomplete")
	}
	return c, nil
}

func (c *cpuSampler) close() {
	if c != nil && c.redis != nil {
		_ = c.redis.Close()
	}
}

// read takes one reading; err says what could not be read.
func (c *cpuSampler) read(ctx context.Context) (cpuReading, error) {
	r := cpuReading{At: time.Now()}
	var errs []error
	if c.redis != nil {
		ctx, cancel := context.WithTimeout(ctx, cpuInterval)
		info, err := c.redis.Info(ctx, "cpu", "stats").Result()
		cancel()
		if err == nil {
			r.RedisCPU, r.RedisCommands, err = parseRedisInfo(info)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("redis INFO: %w", err))
		}
		r.RedisOK = err == nil
	}
	if len(c.pids) > 0 {
		r.ProcOK = true
		for _, pid := range c.pids {
			b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", c.procRoot, pid))
			var ticks int64
			if err == nil {
				ticks, err = parseProcStat(string(b))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
				r.ProcOK = false
				continue
			}
			r.ProcTicks += ticks
		}
	}
	return r, errors.Join(errs...)
}

// start reads every cpuInterval until the returned func is called, which
// takes a last reading and gives them all, with samples of the errors.
func (c *cpuSampler) start(ctx context.Context) (stop func() ([]cpuReading, []string)) {
	return readEvery(ctx, cpuInterval, c.read)
}

// readEvery calls read at once and then every interval until the
// returned func is called, which takes a last reading and gives them all,
// with samples of the errors (none of the readings cut short by the stop).
func readEvery[T any](ctx context.Context, interval time.Duration, read func(context.Context) (T, error)) (stop func() ([]T, []string)) {
	ctx, cancel := context.WithCancel(ctx)
	var readings []T
	var errs []string
	take := func(ctx context.Context) {
		r, err := read(ctx)
		readings = append(readings, r)
		if err != nil && ctx.Err() == nil {
			errs = appendSamples(errs, err.Error())
		}
	}
	take(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				take(ctx)
			}
		}
	})
	return func() ([]T, []string) {
		cancel()
		wg.Wait()
		take(context.WithoutCancel(ctx))
		return readings, errs
	}
}

// parseRedisInfo reads used_cpu_sys + used_cpu_user (seconds) and
// total_commands_processed from INFO's answer.
func parseRedisInfo(info string) (cpuSeconds float64, commands int64, err error) {
	var sys, user, cmds bool
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch key {
		case "used_cpu_sys", "used_cpu_user":
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %q", key, value)
			}
			cpuSeconds += v
			sys, user = sys || key == "used_cpu_sys", user || key == "used_cpu_user"
		case "total_commands_processed":
			if commands, err = strconv.ParseInt(value, 10, 64); err != nil {
				return 0, 0, fmt.Errorf("%s: %q", key, value)
			}
			cmds = true
		}
	}
	if !sys || !user || !cmds {
		return 0, 0, errors.New("no used_cpu_sys, used_cpu_user or total_commands_processed")
	}
	return cpuSeconds, commands, nil
}

// parseProcStat reads utime + stime (clock ticks) from /proc/PID/stat's
// line. The process's name, in parentheses, may hold spaces and
// parentheses of its own: the fields are counted from the last ')'.
func parseProcStat(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("not a stat line")
	}
	// After the name: state (field 3), ..., utime (14), stime (15).
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 13 {
		return 0, errors.New("stat line too short")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q, stime %q", fields[11], fields[12])
	}
	return utime + stime, nil
}
