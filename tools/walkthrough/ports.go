package main

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"time"
)

// freePort picks a port that nothing listens on, in 23000–29999: below
// the ephemeral range, so no outgoing connection takes it before make run
// binds it.
func freePort() (int, error) {
	for range 200 {
		port := 23000 + rand.IntN(7000)
		if !listening(strconv.Itoa(port)) {
			return port, nil
		}
	}
	return 0, errors.New("no free port found")
}

// listening: something accepts connections on 127.0.0.1:port.
func listening(port string) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
