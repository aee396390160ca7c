package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

const schema = `
CREATE TABLE IF NOT EXISTS contender_schedules (
	id bigserial PRIMARY KEY,
	seat_count int NOT NULL
);
CREATE TABLE IF NOT EXISTS contender_reservations (
	id bigserial PRIMARY KEY,
	schedule_id bigint NOT NULL,
	seat_id int NOT NULL,
	user_id text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (schedule_id, seat_id)
)`

// problem writes an RFC 9457 problem with the service's code.
func problem(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"code":%q}`, http.StatusText(status), status, code)
}

func staticHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /schedules", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ SeatCount int }
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"id":1,"seatCount":%d}`, in.SeatCount)
	})
	mux.HandleFunc("POST /reservations", func(w http.ResponseWriter, r *http.Request) {
		problem(w, http.StatusConflict, "seat_taken")
	})
	return mux
}

// store is the contenders' PostgreSQL side.
type store struct{ pool *pgxpool.Pool }

func openStore(ctx context.Context, databaseURL string) (*store, error) {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		pool.Close()
		return nil, err
	}
	return &store{pool: pool}, nil
}

func (s *store) createSchedule(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SeatCount int `json:"seatCount"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SeatCount < 1 {
		problem(w, http.StatusBadRequest, "malformed_json")
		return
	}
	var id int64
	err := s.pool.QueryRow(r.Context(), `INSERT INTO contender_schedules (seat_count) VALUES ($1) RETURNING id`, in.SeatCount).Scan(&id)
	if err != nil {
		problem(w, http.StatusServiceUnavailable, "unavailable")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"id":%d,"seatCount":%d}`, id, in.SeatCount)
}

// booking is a POST /reservations request, its token checked.
type booking struct {
	ScheduleID int64 `json:"scheduleId"`
	SeatID     int   `json:"seatId"`
	user       string
}

// readBooking verifies the bearer token (HS256, exp required) and decodes
// the body; it answers the problem itself when either is wrong.
func readBooking(w http.ResponseWriter, r *http.Request, secret []byte) (booking, bool) {
	var b booking
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		problem(w, http.StatusUnauthorized, "unauthorized")
		return b, false
	}
	tok, err := jwt.Parse(raw, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired())
	if err != nil {
		problem(w, http.StatusUnauthorized, "unauthorized")
		return b, false
	}
	if b.user, err = tok.Claims.GetSubject(); err != nil || b.user == "" {
		problem(w, http.StatusUnauthorized, "unauthorized")
		return b, false
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		problem(w, http.StatusBadRequest, "malformed_json")
		return b, false
	}
	return b, true
}

func writeReservation(w http.ResponseWriter, id int64, b booking, at time.Time) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"id":"%d","scheduleId":%d,"seatId":%d,"userId":%q,"createdAt":%q}`,
		id, b.ScheduleID, b.SeatID, b.user, at.UTC().Format(time.RFC3339Nano))
}

// bookingMux serves a contender that keeps its schedules in s: book
// answers each POST /reservations whose token and body are good.
func bookingMux(s *store, secret []byte, book func(http.ResponseWriter, *http.Request, booking)) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /schedules", s.createSchedule)
	mux.HandleFunc("POST /reservations", func(w http.ResponseWriter, r *http.Request) {
		if b, ok := readBooking(w, r, secret); ok {
			book(w, r, b)
		}
	})
	return mux
}

// releaseScript deletes the key only while it holds the caller's token.
var releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

func naiveHandler(ctx context.Context, databaseURL, redisURL string, secret []byte) (http.Handler, func(), error) {
	s, err := openStore(ctx, databaseURL)
	if err != nil {
		return nil, nil, err
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		s.pool.Close()
		return nil, nil, err
	}
	rdb := redis.NewClient(opts)
	mux := bookingMux(s, secret, func(w http.ResponseWriter, r *http.Request, b booking) {
		ctx := r.Context()
		key := "contender:lock:" + strconv.FormatInt(b.ScheduleID, 10) + ":" + strconv.Itoa(b.SeatID)
		token := strconv.FormatInt(time.Now().UnixNano(), 36) + b.user
		won, err := rdb.SetNX(ctx, key, token, 5*time.Second).Result()
		switch {
		case err != nil:
			problem(w, http.StatusServiceUnavailable, "unavailable")
			return
		case !won:
			w.Header().Set("Retry-After", "1")
			problem(w, http.StatusConflict, "seat_locked")
			return
		}
		defer releaseScript.Run(context.WithoutCancel(ctx), rdb, []string{key}, token)

		var seats int
		var booked bool
		err = s.pool.QueryRow(ctx, `SELECT s.seat_count, EXISTS (SELECT 1 FROM contender_reservations r
			WHERE r.schedule_id = s.id AND r.seat_id = $2) FROM contender_schedules s WHERE s.id = $1`,
			b.ScheduleID, b.SeatID).Scan(&seats, &booked)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			problem(w, http.StatusNotFound, "schedule_not_found")
			return
		case err != nil:
			problem(w, http.StatusServiceUnavailable, "unavailable")
			return
		case b.SeatID < 1 || b.SeatID > seats:
			problem(w, http.StatusNotFound, "seat_not_found")
			return
		case booked:
			problem(w, http.StatusConflict, "seat_taken")
			return
		}
		var id int64
		var at time.Time
		err = s.pool.QueryRow(ctx, `INSERT INTO contender_reservations (schedule_id, seat_id, user_id)
			VALUES ($1, $2, $3) RETURNING id, created_at`, b.ScheduleID, b.SeatID, b.user).Scan(&id, &at)
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation:
			problem(w, http.StatusConflict, "seat_taken")
		case err != nil:
			problem(w, http.StatusServiceUnavailable, "unavailable")
		default:
			writeReservation(w, id, b, at)
		}
	})
	return mux, func() { _ = rdb.Close(); s.pool.Close() }, nil
}

func insertOnlyHandler(ctx context.Context, databaseURL string, secret []byte) (http.Handler, func(), error) {
	s, err := openStore(ctx, databaseURL)
	if err != nil {
		return nil, nil, err
	}
	mux := bookingMux(s, secret, func(w http.ResponseWriter, r *http.Request, b booking) {
		var id int64
		var at time.Time
		err := s.pool.QueryRow(r.Context(), `INSERT INTO contender_reservations (schedule_id, seat_id, user_id)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id, created_at`, b.ScheduleID, b.SeatID, b.user).Scan(&id, &at)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			problem(w, http.StatusConflict, "seat_taken")
		case err != nil:
			problem(w, http.StatusServiceUnavailable, "unavailable")
		default:
			writeReservation(w, id, b, at)
		}
	})
	return mux, s.pool.Close, nil
}
