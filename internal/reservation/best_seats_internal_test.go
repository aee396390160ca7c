package reservation

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// BestBlocks orders windows by tier with a counting sort and sorts only
// the tiers it reaches; referenceBestBlocks is the plain full sort it
// replaced. Both must choose the same blocks, in the same order, for any
// venue, free seats, quantity, category and limit.
func TestBestBlocksAsTheFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3000 {
		rows := make([]Row, 1+rng.IntN(12))
		for i := range rows {
			rows[i] = Row{Label: fmt.Sprint("R", i), Seats: 1 + rng.IntN(30), Category: []string{"a", "b"}[rng.IntN(2)]}
		}
		l, err := NewLayout(rows)
		if err != nil {
			t.Fatal(err)
		}
		taken := rng.Float64()
		occupied := make([]bool, l.SeatCount()+1)
		for s := range occupied {
			occupied[s] = rng.Float64() < taken
		}
		free := func(seat int) bool { return !occupied[seat] }
		quantity, limit := 1+rng.IntN(6), 1+rng.IntN(10)
		category := []string{"", "a", "b"}[rng.IntN(3)]
		got := BestBlocks(l, free, quantity, category, true, limit)
		want := referenceBestBlocks(l, free, quantity, category, true, limit)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %d rows, quantity %d, category %q, limit %d:\n got %+v\nwant %+v", round, len(rows), quantity, category, limit, got, want)
		}
	}
}

func referenceBestBlocks(l Layout, free func(seat int) bool, quantity int, category string, adjacent bool, limit int) []Block {
	if quantity < 1 || limit < 1 {
		return nil
	}
	if !adjacent {
		return scatteredBlocks(l, free, 0, len(l.rows), quantity, category, limit)
	}
	// A window is a block before its seats are listed: its first seat,
	// its quality and strands. Thousands are weighed for each choice, so
	// they are small values, and distances are summed as the window
	// slides.
	type refWindow struct {
		first    int
		distance float64
		strands  int
	}
	var all []refWindow
	for row, r := range l.rows {
		if category != "" && r.Category != category {
			continue
		}
		first := l.first[row]
		for start := 1; start <= r.Seats; {
			if !free(first + start - 1) {
				start++
				continue
			}
			end := start
			for end < r.Seats && free(first+end) {
				end++
			}
			// The run of free seats is numbers start..end of the row.
			if end-start+1 >= quantity {
				sum := 0.0
				for n := start; n < start+quantity; n++ {
					sum += l.distance[first+n-2]
				}
				for a := start; ; a++ {
					b := a + quantity - 1
					w := refWindow{first: first + a - 1, distance: sum / float64(quantity)}
					if a-start == 1 {
						w.strands++
					}
					if end-b == 1 {
						w.strands++
					}
					all = append(all, w)
					if b == end {
						break
					}
					sum += l.distance[first+b-1] - l.distance[first+a-2]
				}
			}
			start = end + 1
		}
	}
	tier := func(d float64) int { return int(d / tierWidth) }
	slices.SortFunc(all, func(a, b refWindow) int {
		return cmp.Or(cmp.Compare(tier(a.distance), tier(b.distance)), cmp.Compare(a.strands, b.strands),
			cmp.Compare(a.distance, b.distance), cmp.Compare(a.first, b.first))
	})
	taken := make(map[int]bool)
	var out []Block
	for _, w := range all {
		blk := Block{Seats: make([]int, quantity), Distance: w.distance, Strands: w.strands}
		overlaps := false
		for i := range quantity {
			blk.Seats[i] = w.first + i
			overlaps = overlaps || taken[w.first+i]
		}
		if overlaps {
			continue
		}
		for _, seat := range blk.Seats {
			taken[seat] = true
		}
		out = append(out, blk)
		if len(out) == limit {
			break
		}
	}
	return out
}
