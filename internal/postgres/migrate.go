package postgres

import (
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/seatlock/seatlock/migrations"
)

// Migrate applies every pending up migration. Concurrent calls from several
// instances are safe: golang-migrate serialises them on a PostgreSQL advisory
// lock, and the ones that come second find nothing left to do.
func Migrate(pool *pgxpool.Pool) error {
	return migrateWith(pool, func(m *migrate.Migrate) error { return m.Up() })
}

// migrateWith runs step on the embedded migrations over pool.
func migrateWith(pool *pgxpool.Pool, step func(*migrate.Migrate) error) (err error) {
	source, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return fmt.Errorf("postgres: migrations source: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer func() { _ = db.Close() }()
	driver, err := pgxmigrate.WithInstance(db, &pgxmigrate.Config{})
	if err != nil {
		return fmt.Errorf("postgres: migrations driver: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", source, "pgx5", driver)
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	defer func() {
		srcErr, dbErr := m.Close()
		if err == nil {
			err = errors.Join(srcErr, dbErr)
		}
	}()
	if err := step(m); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}
