package devenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// Packages is a set of OS packages one use needs, each installed (from
// Debian's packages) when what it provides is missing.
type Packages int

const (
	// Servers is what the test binaries, `make run` and `make cluster`
	// start: redis-server, redis-cli, redis-sentinel, PostgreSQL, Patroni,
	// etcd and etcdctl.
	Servers Packages = iota
	// Browser is Chromium, for the page's browser test (it fails, never
	// skips, without it).
	Browser
	// HAProxy is what `make cluster` puts before its instances.
	HAProxy
)

// provider is an OS package and whether what it provides is there.
type provider struct {
	pkg     string
	present func() bool
}

func command(name string) func() bool {
	return func() bool { _, err := exec.LookPath(name); return err == nil }
}

func postgresPresent() bool { _, err := lockenv.PostgresBin(); return err == nil }

func (p Packages) providers() []provider {
	switch p {
	case Servers:
		return []provider{
			{"redis-server", command("redis-server")},
			{"redis-tools", command("redis-cli")},
			{"redis-sentinel", command("redis-sentinel")},
			{"postgresql", postgresPresent},
			{"patroni", command("patroni")},
			{"etcd-server", command("etcd")},
			{"etcd-client", command("etcdctl")},
		}
	case Browser:
		return []provider{{"chromium", command("chromium")}, {"fonts-dejavu-core", command("chromium")}}
	case HAProxy:
		return []provider{{"haproxy", command("haproxy")}}
	}
	return nil
}

// Install installs from the OS packages what sets need and is missing,
// saying so on say; as another user than root it runs apt-get through
// sudo. The packages may start system-wide servers; ours run on their own
// ports, so those are left alone.
func Install(say io.Writer, sets ...Packages) error {
	var want []string
	var providers []provider
	for _, set := range sets {
		for _, p := range set.providers() {
			providers = append(providers, p)
			if !p.present() {
				want = append(want, p.pkg)
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	logf(say, "devenv", "installing %s from the OS packages", strings.Join(want, " "))
	if err := asRoot(say, "apt-get", "update", "-qq"); err != nil {
		return err
	}
	install := append([]string{"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "--no-install-recommends"}, want...)
	if err := asRoot(say, install[0], install[1:]...); err != nil {
		return err
	}
	for _, p := range providers {
		if !p.present() {
			return fmt.Errorf("%s installed, but what it provides is still not found", p.pkg)
		}
	}
	return nil
}

// asRoot runs a command as root: itself when this process is root, else
// through sudo. Its output goes to say.
func asRoot(say io.Writer, name string, args ...string) error {
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return fmt.Errorf("need root or sudo to run: %s %s", name, strings.Join(args, " "))
		}
		name, args = "sudo", append([]string{name}, args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Stderr = say
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
