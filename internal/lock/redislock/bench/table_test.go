package bench

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

var (
	printTable = flag.Bool("table", false, "print every round's results in Go's benchmark format for benchstat instead of running the tests")
	rounds     = flag.Int("rounds", 10, "rounds per contender, interleaved")
)

// TestMain prints the rounds with -table (make bench, which hands them to
// benchstat); otherwise the tests run as usual. Both run on lockenv's
// Redis.
func TestMain(m *testing.M) {
	flag.Parse()
	if *printTable {
		lockenv.Run(table{})
	}
	lockenv.Run(m)
}

// table is the work of TestMain with -table.
type table struct{}

func (table) Run() int {
	if err := writeTable(os.Stdout, os.Stderr, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// writeTable writes every round of every contender to w as a benchmark
// line, BenchmarkSCENARIO/contender=KEY, so that benchstat compares the
// contenders over the rounds (a median, its spread, and a p-value for
// each change); and a line to progress as each benchmark ends: a round of
// every contender takes several seconds.
func writeTable(w, progress io.Writer, rounds int) error {
	url, err := lockenv.URL("TEST_REDIS_URL")
	if err != nil {
		return err
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("TEST_REDIS_URL: %w", err)
	}
	client := redis.NewClient(opts)
	defer func() { _ = client.Close() }()
	procs := runtime.GOMAXPROCS(0)
	_, _ = fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: %s\n", runtime.GOOS, runtime.GOARCH, "github.com/seatlock/seatlock/internal/lock/redislock/bench")
	for _, scenario := range []struct {
		name, title string
		run         func(*testing.B, *redis.Client, contender)
	}{
		{"FreeKeys", fmt.Sprintf("acquire + release of a free key, %d goroutines", goroutinesPerCPU*procs), benchFreeKeys},
		{"FreeKeysCrowd", fmt.Sprintf("acquire + release of a free key, %d goroutines", crowdPerCPU*procs), benchFreeKeysCrowd},
		{"OneKey", fmt.Sprintf("contended: %d goroutines try one key, the winner releases", goroutinesPerCPU*procs), benchOneKey},
	} {
		cs := contenders(client)
		// Rounds interleave the contenders so that a busy moment of the
		// machine does not land on one of them only.
		for round := range rounds {
			for _, c := range cs {
				r := testing.Benchmark(func(b *testing.B) { scenario.run(b, client, c) })
				_, _ = fmt.Fprintf(w, "Benchmark%s/contender=%s-%d\t%s\t%s\n", scenario.name, c.key, procs, r.String(), r.MemString())
				_, _ = fmt.Fprintf(progress, "bench: %s: round %d of %d, %s done\n", scenario.title, round+1, rounds, c.name)
			}
		}
		for _, c := range cs {
			if c.close != nil {
				c.close()
			}
		}
	}
	return nil
}
