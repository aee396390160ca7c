package devenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// pgHome returns where DIR's PostgreSQL cluster lives: DIR/pg, unless it
// runs as the postgres user (we are root) and that user cannot enter DIR
// (a parent directory is not searchable by others); then a directory of
// its own under the postgres user's home, named after a hash of DIR, with
// an `origin` file naming DIR.
func pgHome(dir string) (string, error) {
	cred, err := lockenv.PostgresUser()
	if err != nil {
		return "", err
	}
	if cred == nil || asUser(cred, "test", "-x", dir).Run() == nil {
		return filepath.Join(dir, "pg"), nil
	}
	home, err := postgresHome()
	if err != nil {
		return "", fmt.Errorf("the postgres user has no home directory to keep the cluster of %s in: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(home, "seatlock", hex.EncodeToString(sum[:])[:16]), nil
}

// pgHAHome returns where DIR's Patroni nodes keep their data: DIR/pgha, or,
// when pgHome puts DIR's cluster under the postgres user's home, beside it
// (its name with -pgha).
func pgHAHome(dir string) (string, error) {
	pg, err := pgHome(dir)
	if err != nil || pg == filepath.Join(dir, "pg") {
		return filepath.Join(dir, "pgha"), err
	}
	return pg + "-pgha", nil
}

// postgresHome is the postgres user's home directory.
func postgresHome() (string, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(u.HomeDir); err != nil || !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", u.HomeDir)
	}
	return u.HomeDir, nil
}

// asUser is a command run as cred (this process's own user when nil), from
// / (the caller's directory may be one that user cannot enter).
func asUser(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// ownData makes data, a directory PostgreSQL (or Patroni) keeps its files
// in for DIR, and hands it to cred: an `origin` file names DIR when data
// is not under it, for Purge and Orphans.
func ownData(dir, data string, cred *syscall.Credential) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	if !strings.HasPrefix(data, dir+string(filepath.Separator)) {
		if err := os.WriteFile(filepath.Join(data, "origin"), []byte(dir+"\n"), 0o644); err != nil {
			return err
		}
	}
	if cred == nil {
		return nil
	}
	if err := os.Chown(data, int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	if asUser(cred, "test", "-w", data).Run() != nil {
		return fmt.Errorf("the postgres user cannot write %s", data)
	}
	return nil
}

// originOf returns the directory data's origin file names, or "".
func originOf(data string) string {
	b, err := os.ReadFile(filepath.Join(data, "origin"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// removeData deletes data, a directory of DIR's servers' data, when it is
// under DIR or its origin file names DIR; else it leaves it and says why.
func removeData(dir, data string) error {
	if strings.HasPrefix(data, dir+string(filepath.Separator)) || originOf(data) == dir {
		return os.RemoveAll(data)
	}
	if _, err := os.Stat(data); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("left %s alone: its origin file does not name %s", data, dir)
}
