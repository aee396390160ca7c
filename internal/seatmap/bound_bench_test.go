package seatmap

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// stadiumSeats is the seat count of the largest venue the service sells.
const stadiumSeats = 80_000

// heapAndStacks is what the Go runtime holds in use after a collection:
// the heap's live objects and the goroutines' stacks.
func heapAndStacks() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc + ms.StackInuse)
}

// perItem is what each of n items made by makeAll holds in memory.
func perItem(n int, makeAll func() any) float64 {
	before := heapAndStacks()
	kept := makeAll()
	after := heapAndStacks()
	runtime.KeepAlive(kept)
	return float64(after-before) / float64(n)
}

// BenchmarkImageBytes measures what a stadium's image holds (its seat
// codes, and the flags of a seat with an expected change), half its seats
// occupied, and, apart, what the schedule's layout holds (kept by the
// service's cache of schedules, image or not); and how many such images
// fit in 512 MiB. The loop loads an image, for its time.
func BenchmarkImageBytes(b *testing.B) {
	const n = 32
	schedule := reservation.RestoreSchedule(1, "Final", time.Now(), stadiumSeats)
	occupied := make([]reservation.OccupiedSeat, 0, stadiumSeats/2)
	for seat := 1; seat <= stadiumSeats; seat += 2 {
		occupied = append(occupied, reservation.OccupiedSeat{ID: seat, Status: reservation.SeatReserved})
	}
	newImage := func() *Image {
		image := NewImage(schedule)
		image.Reset(int64(len(occupied)), "1-0", "1-0", occupied)
		image.Expect([]int{2}, reservation.SeatHeld)
		return image
	}
	imageBytes := perItem(n, func() any {
		images := make([]*Image, n)
		for i := range images {
			images[i] = newImage()
		}
		return images
	})
	layoutBytes := perItem(n, func() any {
		schedules := make([]reservation.Schedule, n)
		for i := range schedules {
			schedules[i] = reservation.RestoreSchedule(int64(i), "Final", time.Now(), stadiumSeats)
		}
		return schedules
	})
	b.ResetTimer()
	for b.Loop() {
		newImage()
	}
	b.ReportMetric(imageBytes, "image-B")
	b.ReportMetric(layoutBytes, "layout-B")
	b.ReportMetric(float64(weigh(schedule)), "weighed-B")
	b.ReportMetric(float64(512<<20)/imageBytes, "images/512MiB")
	b.ReportMetric(float64(512<<20)/(imageBytes+layoutBytes), "images+layouts/512MiB")
}

// BenchmarkKeptImageOverhead measures what keeping an image costs besides
// its seats: the goroutine that applies its events, its subscription and
// the feed's hub, for images of one seat followed through a real Redis.
func BenchmarkKeptImageOverhead(b *testing.B) {
	const n = 500
	feed := seatfeed.New(lockenv.Redis(b), seatfeed.Config{Block: 100 * time.Millisecond})
	b.Cleanup(feed.Close)
	first := rand.Int64N(1<<40) + 1
	schedules := make([]reservation.Schedule, n)
	for i := range schedules {
		schedules[i] = reservation.RestoreSchedule(first+int64(i), "Final", time.Now(), 1)
	}
	var overhead float64
	for b.Loop() {
		images := NewImages(feed, &listedSeats{}, Config{})
		overhead = perItem(n, func() any {
			for _, s := range schedules {
				if _, err := images.Image(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
			return images
		})
		images.Close()
	}
	b.ReportMetric(overhead, "kept-overhead-B")
	b.ReportMetric(keptImageOverhead, "weighed-overhead-B")
}
