package reservation

// Booked is Reserve's answer: the reservation, and Recovered when it is
// the one that the earlier request of a resumed idempotency claim made
// (found, nothing done now), which the edge marks as a replayed answer.
type Booked struct {
	Reservation
	Recovered bool
}

// Held is Hold's and HoldBest's answer: the hold, and Recovered when it is
// the one that the earlier request of a resumed idempotency claim made.
type Held struct {
	Hold
	Recovered bool
}

// Confirmed is Confirm's answer: the hold's reservations, and Again when
// the hold had been confirmed before this call (by an earlier request:
// for a resumed idempotency claim, the answer it lost).
type Confirmed struct {
	Reservations []Reservation
	Again        bool
}
