package httpapi

import (
	"context"
	"encoding/json"

	"github.com/seatlock/seatlock/internal/reservation"
)

// EventData renders the data of the webhook events (postgres.EventData)
// with the very functions that answer GET /holds/{id} and GET
// /reservations/{id}, so that an event's object and the API's never
// differ.
type EventData struct {
	schedule scheduleFunc
}

// NewEventData returns the renderer of events' data; schedule reads the
// schedule whose layout labels a hold's seats (Bookings.Schedule, which
// keeps schedules in memory: it is called inside the change's
// transaction).
func NewEventData(schedule func(ctx context.Context, id int64) (reservation.Schedule, error)) *EventData {
	return &EventData{schedule: schedule}
}

// Hold is the hold as GET /holds/{id} shows it.
func (d *EventData) Hold(ctx context.Context, h reservation.Hold) (json.RawMessage, error) {
	return json.Marshal(toHoldResponse(ctx, d.schedule, h))
}

// Reservation is the reservation as GET /reservations/{id} shows it.
func (d *EventData) Reservation(r reservation.Reservation) (json.RawMessage, error) {
	return json.Marshal(toReservationResponse(r))
}
