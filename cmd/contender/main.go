// Command contender serves the plain reference contenders that `make
// compare` sets the service against, each written as simply as the booking
// contract allows, with the service's drivers (net/http, go-redis, pgx,
// golang-jwt):
//
//	CONTENDER=naive       the naive flow: verify the token, SET NX PX the
//	                      seat's key, one query for "schedule, seat and
//	                      already booked?", INSERT, owner-checked DEL.
//	                      No fencing, no waiting, no cache.
//	CONTENDER=static      every booking answered with a fixed 409
//	                      seat_taken: no token, no store. The most this
//	                      machine answers: the hot seat's ceiling.
//	CONTENDER=insertonly  verify the token, then one INSERT ... ON CONFLICT
//	                      DO NOTHING, its own commit: the naive ceiling of
//	                      fresh seats.
//
// Each answers POST /schedules {seatCount} (no auth) and POST /reservations
// {scheduleId, seatId} with the service's statuses and problem codes, and
// GET /readyz. Configuration: HTTP_ADDR, DATABASE_URL (its own database: it
// makes its own tables), REDIS_URL (naive), AUTH_SECRET.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	h, closeAll, err := newContender(context.Background(), os.Getenv("CONTENDER"), os.Getenv("DATABASE_URL"),
		os.Getenv("REDIS_URL"), os.Getenv("AUTH_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	defer closeAll()
	srv := &http.Server{Addr: os.Getenv("HTTP_ADDR"), Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// newContender returns the handler of the named contender and what closes
// its connections.
func newContender(ctx context.Context, name, databaseURL, redisURL, secret string) (http.Handler, func(), error) {
	switch name {
	case "static":
		return staticHandler(), func() {}, nil
	case "naive":
		return naiveHandler(ctx, databaseURL, redisURL, []byte(secret))
	case "insertonly":
		return insertOnlyHandler(ctx, databaseURL, []byte(secret))
	}
	return nil, nil, fmt.Errorf("CONTENDER must be naive, static or insertonly, got %q", name)
}
