package bench

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

var (
	printTable = flag.Bool("table", false, "print the comparison table instead of running the tests")
	rounds     = flag.Int("rounds", 5, "rounds per contender; the table shows the median")
)

// TestMain prints the table with -table (make bench); otherwise the tests
// run as usual. Both run on lockenv's Redis.
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

// figures is one contender's median result.
type figures struct {
	nsPerOp, allocsPerOp, bytesPerOp int64
}

// writeTable writes the table to w and a line to progress as each
// benchmark ends: a round of every contender takes several seconds.
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
	for _, scenario := range []struct {
		title string
		run   func(*testing.B, *redis.Client, contender)
	}{
		{fmt.Sprintf("acquire + release of a free key, %d goroutines", goroutinesPerCPU*procs), benchFreeKeys},
		{fmt.Sprintf("acquire + release of a free key, %d goroutines", crowdPerCPU*procs), benchFreeKeysCrowd},
		{fmt.Sprintf("contended: %d goroutines try one key, the winner releases", goroutinesPerCPU*procs), benchOneKey},
	} {
		cs := contenders(client)
		samples := make([][]testing.BenchmarkResult, len(cs))
		// Rounds interleave the contenders so that a busy moment of the
		// machine does not land on one of them only.
		for round := range rounds {
			for i, c := range cs {
				samples[i] = append(samples[i], testing.Benchmark(func(b *testing.B) { scenario.run(b, client, c) }))
				_, _ = fmt.Fprintf(progress, "bench: %s: round %d of %d, %s done\n", scenario.title, round+1, rounds, c.name)
			}
		}
		for _, c := range cs {
			if c.close != nil {
				c.close()
			}
		}
		_, _ = fmt.Fprintf(w, "\n%s (median of %d)\n\n", scenario.title, rounds)
		_, _ = fmt.Fprintln(w, "| contender | ns/op | allocs/op | B/op | ratio to floor |")
		_, _ = fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
		floor := median(samples[0])
		for i, c := range cs {
			f := median(samples[i])
			_, _ = fmt.Fprintf(w, "| %s | %d | %d | %d | %.2f |\n", c.name, f.nsPerOp, f.allocsPerOp, f.bytesPerOp,
				float64(f.nsPerOp)/float64(floor.nsPerOp))
		}
	}
	return nil
}

func median(results []testing.BenchmarkResult) figures {
	pick := func(v func(testing.BenchmarkResult) int64) int64 {
		xs := make([]int64, len(results))
		for i, r := range results {
			xs[i] = v(r)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	return figures{
		nsPerOp:     pick(func(r testing.BenchmarkResult) int64 { return r.NsPerOp() }),
		allocsPerOp: pick(func(r testing.BenchmarkResult) int64 { return r.AllocsPerOp() }),
		bytesPerOp:  pick(func(r testing.BenchmarkResult) int64 { return r.AllocedBytesPerOp() }),
	}
}
