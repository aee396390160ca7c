package reservation_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// The note is a fixed-length digest of the user id, never the id itself.
func TestOwnerNote(t *testing.T) {
	t.Parallel()
	// The first 8 bytes of SHA-256("alice"), in hex.
	if got, want := reservation.OwnerNote("alice"), "2bd806c97f0e00af"; got != want {
		t.Errorf("OwnerNote(alice) = %q, want %q", got, want)
	}
	if reservation.OwnerNote("alice") == reservation.OwnerNote("bob") {
		t.Error("alice and bob share a note")
	}
}

// The use case on a real lock.Client (over memlock, with seal memory as
// FAST_PATH has it), with the repository's calls counted: the owner's
// retry of a booked seat gets the same reservation for one look-up and no
// insert; anyone else gets ErrSeatTaken with no repository call at all,
// whether the seal is remembered or read from the store.
func TestOwnersRetryOnSealedSeat(t *testing.T) {
	t.Parallel()
	for _, remember := range []bool{true, false} {
		t.Run(map[bool]string{true: "seal remembered", false: "seal read from the store"}[remember], func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			repo := newFakeRepo(j)
			repo.addSchedule(scheduleID, seatCount)
			locker := lock.New(memlock.New(), lock.Config{RememberSeals: remember})
			t.Cleanup(locker.Close)
			svc := reservation.NewService(repo, locker, reservation.Config{LockTTL: lockTTL, SealBooked: true}, nil)
			reserve := func(user string) (reservation.Reservation, []string, error) {
				before := len(j.list())
				r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: user})
				return r.Reservation, j.list()[before:], err
			}

			first, _, err := reserve("alice")
			if err != nil {
				t.Fatalf("first booking: %v", err)
			}
			for range 2 {
				again, calls, err := reserve("alice")
				if err != nil || again != first {
					t.Fatalf("the owner's retry: %+v, %v; want the first reservation %+v", again, err, first)
				}
				if !slices.Equal(calls, []string{"SeatReservation"}) {
					t.Errorf("the owner's retry made repository calls %q, want one SeatReservation", calls)
				}
			}
			for range 2 {
				_, calls, err := reserve("bob")
				if !errors.Is(err, reservation.ErrSeatTaken) {
					t.Fatalf("another user's booking: %v, want ErrSeatTaken", err)
				}
				if len(calls) != 0 {
					t.Errorf("another user's booking made repository calls %q, want none", calls)
				}
			}
			if n := repo.count(); n != 1 {
				t.Errorf("stored reservations = %d, want 1", n)
			}
		})
	}
}

// An insert of unknown outcome that finds the seat booked by another user
// seals it with that user's note, so that their retry is answered.
func TestUnknownOutcomeSealsWithTheFoundOwnersNote(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	repo.before["InsertReservation"] = func() { repo.addReservation(scheduleID, 3, "bob") }
	repo.fail["InsertReservation"] = errDBDown
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{LockTTL: lockTTL, SealBooked: true}, nil)

	_, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

	var taken *reservation.SeatTakenError
	if !errors.As(err, &taken) || taken.Owner != "bob" {
		t.Fatalf("Reserve: %v, want a *SeatTakenError naming bob", err)
	}
	want := []string{"Schedule", acquired(3), "InsertReservation", "SeatReservation", sealed(3, "bob")}
	if got := j.list(); !slices.Equal(got, want) {
		t.Errorf("calls:\n got  %q\n want %q", got, want)
	}
}

func TestSeatTakenErrorIsErrSeatTaken(t *testing.T) {
	t.Parallel()
	err := error(&reservation.SeatTakenError{Owner: "bob"})
	if !errors.Is(err, reservation.ErrSeatTaken) || err.Error() != reservation.ErrSeatTaken.Error() {
		t.Errorf("%v: want errors.Is ErrSeatTaken with its text", err)
	}
	if errors.Is(err, reservation.ErrSeatLocked) {
		t.Error("a *SeatTakenError is ErrSeatLocked")
	}
}
