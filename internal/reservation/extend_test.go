package reservation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/reservation"
)

// extendRepo records the extensions it is asked for and answers err.
type extendRepo struct {
	reservation.Repository
	asked []reservation.HoldExtension
	err   error
}

func (r *extendRepo) ExtendHold(ctx context.Context, ext reservation.HoldExtension) (reservation.Hold, error) {
	if _, ok := ctx.Deadline(); !ok {
		return reservation.Hold{}, errors.New("extendRepo: the write has no deadline")
	}
	r.asked = append(r.asked, ext)
	if r.err != nil {
		return reservation.Hold{}, r.err
	}
	return reservation.RestoreHold(ext.ID, scheduleID, []int{1}, ext.UserID, createdAt, createdAt.Add(ext.TTL),
		reservation.HoldActive), nil
}

func TestExtendAsksTheStoreForHoldTTLWithinTheMaxLifetime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		cfg      reservation.Config
		ttl, max time.Duration
	}{
		{"defaults", reservation.Config{}, reservation.DefaultHoldTTL, reservation.DefaultHoldMaxLifetime},
		{"configured", reservation.Config{HoldTTL: time.Minute, HoldMaxLifetime: 5 * time.Minute}, time.Minute, 5 * time.Minute},
		{"a HOLD_TTL above the default cap raises it", reservation.Config{HoldTTL: 45 * time.Minute}, 45 * time.Minute, 45 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := &extendRepo{}
			id := uuid.New()
			h, err := reservation.NewService(repo, &fakeMultiLocker{}, tt.cfg, nil).Extend(context.Background(), id, "alice")
			if err != nil || h.ID() != id {
				t.Fatalf("Extend = %+v, %v", h, err)
			}
			want := reservation.HoldExtension{ID: id, UserID: "alice", TTL: tt.ttl, MaxLifetime: tt.max}
			if len(repo.asked) != 1 || repo.asked[0] != want {
				t.Errorf("asked %+v, want %+v", repo.asked, want)
			}
		})
	}
}

func TestExtendPassesTheStoresRefusalsOn(t *testing.T) {
	t.Parallel()
	for _, refusal := range []error{reservation.ErrHoldNotFound, reservation.ErrHoldExpired, reservation.ErrHoldReleased,
		reservation.ErrHoldConfirmed, reservation.ErrHoldLifetimeExceeded, reservation.ErrUnavailable} {
		repo := &extendRepo{err: refusal}
		locker := &fakeMultiLocker{}
		_, err := reservation.NewService(repo, locker, reservation.Config{}, nil).Extend(context.Background(), uuid.New(), "alice")
		if !errors.Is(err, refusal) {
			t.Errorf("Extend = %v, want %v", err, refusal)
		}
		if len(locker.leases) != 0 {
			t.Errorf("Extend took %d seat locks, want none", len(locker.leases))
		}
	}
}
