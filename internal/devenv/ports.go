package devenv

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// freePorts returns n distinct free ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		p, err := lockenv.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	return ports, nil
}

// randomHex returns n random bytes in hex: a password or a secret.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hostPort is 127.0.0.1:port.
func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
