package reservation

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// "Best available": which seats a hold of a quantity gets.
//
// A seat's quality is its distance from the venue's best point: the
// centre of the row two-thirds of the way from the front to the back
// (where sight lines and sound are best in most halls), with a row counted
// as deep as two seats are wide. A block of seats is as good as the mean of
// its seats. Blocks fall into tiers of one seat width of distance; within a
// tier, a block that leaves no single free seat stranded (alone between
// taken seats or a row's end) comes first, then the closer one. So a
// stranded seat is only ever left when no block of the same quality avoids
// it, and the quantity-one buyers who come later fill such seats.

// rowDepth is how many seat widths one row is deep.
const rowDepth = 2.0

// tierWidth is the width of a tier of quality, in seat widths.
const tierWidth = 1.0

// Block is one choice of seats for a hold: their ids in ascending order,
// their mean distance from the venue's best point (in seat widths) and how
// many single free seats taking them would strand.
type Block struct {
	Seats    []int
	Distance float64
	Strands  int
}

// seatDistance is a seat's distance from its section's best point, in
// seat widths (Layout.distance keeps them, by seat): each section is a
// hall of its own, and a better section is one listed earlier.
func (l Layout) seatDistance(row, number int) float64 {
	lo, hi := l.SectionRows(l.rowSection[row])
	bestRow := float64(hi-lo-1) * 2 / 3
	centre := float64(l.rows[row].Seats+1) / 2
	dy := (float64(row-lo) - bestRow) * rowDepth
	dx := float64(number) - centre
	return math.Hypot(dx, dy)
}

// AnySection asks BestBlocksIn and FreeSeatsIn for seats of any section.
const AnySection = -1

// BestBlocks lists the blocks of quantity seats of category ("" for any)
// that free allows, best first, no two sharing a seat, at most limit of
// them. With adjacent, a block is consecutive seats of one row; without,
// it is the quantity best free seats of one section (and the next blocks
// are the next best seats). The blocks all come from the best section
// (the first listed) that has one. None when no block fits.
func BestBlocks(l Layout, free func(seat int) bool, quantity int, category string, adjacent bool, limit int) []Block {
	return BestBlocksIn(l, free, quantity, category, AnySection, adjacent, limit)
}

// BestBlocksIn is BestBlocks within section (an index into Sections, or
// AnySection). Without adjacency, when no section alone has quantity free
// seats of category, a block takes the best free seats of the best
// sections together.
func BestBlocksIn(l Layout, free func(seat int) bool, quantity int, category string, section int, adjacent bool, limit int) []Block {
	if quantity < 1 || limit < 1 {
		return nil
	}
	lo, hi := 0, len(l.sections)
	if section != AnySection {
		lo, hi = section, section+1
	}
	for s := lo; s < hi; s++ {
		rowsFrom, rowsTo := l.SectionRows(s)
		var blocks []Block
		if adjacent {
			blocks = adjacentBlocks(l, free, rowsFrom, rowsTo, quantity, category, limit)
		} else {
			blocks = scatteredBlocks(l, free, rowsFrom, rowsTo, quantity, category, limit)
		}
		if len(blocks) > 0 {
			return blocks
		}
	}
	if !adjacent && hi-lo > 1 {
		rowsFrom, _ := l.SectionRows(lo)
		_, rowsTo := l.SectionRows(hi - 1)
		return scatteredBlocks(l, free, rowsFrom, rowsTo, quantity, category, limit)
	}
	return nil
}

// adjacentBlocks is BestBlocks with adjacency, over rows rowsFrom..rowsTo-1
// of one section.
func adjacentBlocks(l Layout, free func(seat int) bool, rowsFrom, rowsTo, quantity int, category string, limit int) []Block {
	// A window is a block before its seats are listed: its first seat,
	// its tier, strands and quality. Thousands are weighed for each
	// choice, so they are small values, distances are summed as the
	// window slides, and they are ordered by tier with a counting sort,
	// only the tiers the choice reaches then sorted in full.
	buf := windowBuffers.Get().(*windowBuffer)
	defer windowBuffers.Put(buf)
	all := buf.all[:0]
	minTier, maxTier := math.MaxInt, -1
	for row := rowsFrom; row < rowsTo; row++ {
		r := l.rows[row]
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
					w := window{first: first + a - 1, distance: sum / float64(quantity)}
					w.tier = int(w.distance / tierWidth)
					if a-start == 1 {
						w.strands++
					}
					if end-b == 1 {
						w.strands++
					}
					minTier, maxTier = min(minTier, w.tier), max(maxTier, w.tier)
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
	buf.all = all
	if len(all) == 0 {
		return nil
	}
	// Counting sort by tier: starts[t-minTier] is where tier t begins.
	starts := slices.Grow(buf.starts[:0], maxTier-minTier+2)[:maxTier-minTier+2]
	clear(starts)
	for _, w := range all {
		starts[w.tier-minTier+1]++
	}
	for t := 1; t < len(starts); t++ {
		starts[t] += starts[t-1]
	}
	byTier := slices.Grow(buf.byTier[:0], len(all))[:len(all)]
	next := slices.Grow(buf.next[:0], len(starts))[:len(starts)]
	copy(next, starts)
	for _, w := range all {
		byTier[next[w.tier-minTier]] = w
		next[w.tier-minTier]++
	}
	buf.starts, buf.byTier, buf.next = starts, byTier, next
	var out []Block
	for t := 0; t+1 < len(starts) && len(out) < limit; t++ {
		tier := byTier[starts[t]:starts[t+1]]
		slices.SortFunc(tier, func(a, b window) int {
			return cmp.Or(cmp.Compare(a.strands, b.strands), cmp.Compare(a.distance, b.distance), cmp.Compare(a.first, b.first))
		})
		for _, w := range tier {
			overlaps := false
			for _, o := range out {
				overlaps = overlaps || w.first < o.Seats[0]+quantity && o.Seats[0] < w.first+quantity
			}
			if overlaps {
				continue
			}
			blk := Block{Seats: make([]int, quantity), Distance: w.distance, Strands: w.strands}
			for i := range quantity {
				blk.Seats[i] = w.first + i
			}
			out = append(out, blk)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// window is a block of BestBlocks before its seats are listed.
type window struct {
	first    int
	tier     int
	strands  int
	distance float64
}

// windowBuffer is BestBlocks' working memory, reused across choices.
type windowBuffer struct {
	all, byTier  []window
	starts, next []int
}

var windowBuffers = sync.Pool{New: func() any { return new(windowBuffer) }}

// scatteredBlocks is BestBlocks without adjacency over rows
// rowsFrom..rowsTo-1: the free seats of category by section, then
// distance, quantity at a time.
func scatteredBlocks(l Layout, free func(seat int) bool, rowsFrom, rowsTo, quantity int, category string, limit int) []Block {
	type scored struct {
		section, seat int
		distance      float64
	}
	var seats []scored
	for row := rowsFrom; row < rowsTo; row++ {
		r := l.rows[row]
		if category != "" && r.Category != category {
			continue
		}
		for n := 1; n <= r.Seats; n++ {
			if id := l.first[row] + n - 1; free(id) {
				seats = append(seats, scored{l.rowSection[row], id, l.distance[id-1]})
			}
		}
	}
	if len(seats) < quantity {
		return nil
	}
	slices.SortFunc(seats, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.section, b.section), cmp.Compare(a.distance, b.distance), cmp.Compare(a.seat, b.seat))
	})
	var out []Block
	for i := 0; i+quantity <= len(seats) && len(out) < limit; i += quantity {
		blk := Block{Seats: make([]int, quantity)}
		sum := 0.0
		for j, s := range seats[i : i+quantity] {
			blk.Seats[j] = s.seat
			sum += s.distance
		}
		slices.Sort(blk.Seats)
		blk.Distance = sum / float64(quantity)
		out = append(out, blk)
	}
	return out
}

// FreeSeats counts the seats of category ("" for any) that free allows.
func FreeSeats(l Layout, free func(seat int) bool, category string) int {
	return FreeSeatsIn(l, free, category, AnySection)
}

// FreeSeatsIn is FreeSeats within section (or AnySection).
func FreeSeatsIn(l Layout, free func(seat int) bool, category string, section int) int {
	rowsFrom, rowsTo := 0, len(l.rows)
	if section != AnySection {
		rowsFrom, rowsTo = l.SectionRows(section)
	}
	n := 0
	for row := rowsFrom; row < rowsTo; row++ {
		r := l.rows[row]
		if category != "" && r.Category != category {
			continue
		}
		for id := l.first[row]; id < l.first[row]+r.Seats; id++ {
			if free(id) {
				n++
			}
		}
	}
	return n
}
