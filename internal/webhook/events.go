package webhook

import "slices"

// The event types an endpoint may subscribe to. A hold's events carry the
// hold as GET /holds/{id} shows it, a reservation's the reservation as GET
// /reservations/{id} does.
const (
	ReservationCreated   = "reservation.created"
	ReservationCancelled = "reservation.cancelled"
	HoldCreated          = "hold.created"
	HoldConfirmed        = "hold.confirmed"
	HoldReleased         = "hold.released"
	HoldExpired          = "hold.expired"
)

// EventTypes lists every event type, the subscription of an endpoint that
// names none.
func EventTypes() []string {
	return []string{ReservationCreated, ReservationCancelled, HoldCreated, HoldConfirmed, HoldReleased, HoldExpired}
}

// KnownEventType reports whether t is one of EventTypes.
func KnownEventType(t string) bool { return slices.Contains(EventTypes(), t) }
